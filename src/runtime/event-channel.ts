/**
 * A one-consumer async queue: producers (the turn, tools finishing in parallel) push events as
 * they happen, the turn's generator yields them in order. Closing or failing ends the iteration
 * after everything already pushed has been delivered.
 *
 * The iterator is written out rather than an async generator: a turn streams dozens of events
 * (every text delta), and an event already queued is handed over in one resolved promise instead
 * of a generator's own suspension and the delegation through it.
 */
export class EventChannel<Item> implements AsyncIterable<Item> {
  #items: Item[] = [];
  /** The next item to hand over in `#items` (a cursor: no shift per item). */
  #next = 0;
  #closed = false;
  #failure: { error: unknown } | null = null;
  #waiting: {
    resolve: (result: IteratorResult<Item, undefined>) => void;
    reject: (error: unknown) => void;
  } | null = null;

  push(item: Item): void {
    if (this.#closed) return;
    const waiting = this.#waiting;
    if (waiting !== null) {
      this.#waiting = null;
      waiting.resolve({ value: item, done: false });
      return;
    }
    this.#items.push(item);
  }

  close(): void {
    this.#closed = true;
    this.#settleWaiting();
  }

  fail(error: unknown): void {
    if (this.#closed) return;
    this.#failure = { error };
    this.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<Item, undefined> {
    return {
      next: () => this.#take(),
      return: async () => {
        this.#closed = true;
        this.#items = [];
        this.#next = 0;
        return { value: undefined, done: true };
      },
    };
  }

  #take(): Promise<IteratorResult<Item, undefined>> {
    if (this.#next < this.#items.length) {
      const value = this.#items[this.#next++] as Item;
      if (this.#next === this.#items.length) {
        this.#items = [];
        this.#next = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#closed) return this.#end();
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  #end(): Promise<IteratorResult<Item, undefined>> {
    const failure = this.#failure;
    if (failure !== null) {
      // Thrown once: the iteration is over after it.
      this.#failure = null;
      return Promise.reject(failure.error);
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  #settleWaiting(): void {
    const waiting = this.#waiting;
    if (waiting === null) return;
    this.#waiting = null;
    this.#end().then(waiting.resolve, waiting.reject);
  }
}
