/**
 * A one-consumer async queue: producers (the turn, tools finishing in parallel) push events as
 * they happen, the turn's generator yields them in order. Closing or failing ends the iteration
 * after everything already pushed has been delivered.
 */
export class EventChannel<Item> implements AsyncIterable<Item> {
  #items: Item[] = [];
  #closed = false;
  #failure: { error: unknown } | null = null;
  #wake: (() => void) | null = null;

  push(item: Item): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#notify();
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  fail(error: unknown): void {
    this.#failure = { error };
    this.close();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for (;;) {
      if (this.#items.length > 0) {
        const batch = this.#items;
        this.#items = [];
        yield* batch;
        continue;
      }
      if (this.#closed) {
        if (this.#failure) throw this.#failure.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
