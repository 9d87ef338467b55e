/** A consumer's `next()` waiting for an item. */
interface Waiter<Item> {
  resolve: (result: IteratorResult<Item, undefined>) => void;
  reject: (error: unknown) => void;
}

/**
 * A one-consumer async queue: producers (the turn, tools finishing in parallel) push events as
 * they happen, the turn's stream hands them on in order. Closing or failing ends the iteration
 * after everything already pushed has been delivered. A consumer may ask again before an answer
 * came (`next()` twice at once, as an async generator allows): the calls are answered in order.
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
  /** The `next()` calls waiting, oldest first (nearly always none or one). */
  #waiting: Waiter<Item>[] = [];

  push(item: Item): void {
    if (this.#closed) return;
    const waiting = this.#waiting.shift();
    if (waiting !== undefined) {
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
        // Left by its consumer: a failure no one asked for is not thrown at a later `next()`.
        this.#failure = null;
        this.#settleWaiting();
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
      this.#waiting.push({ resolve, reject });
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
    if (waiting.length === 0) return;
    this.#waiting = [];
    for (const waiter of waiting) this.#end().then(waiter.resolve, waiter.reject);
  }
}
