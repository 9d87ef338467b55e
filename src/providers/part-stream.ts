/**
 * Parts handed out one at a time from batches made by an async generator. An async generator's
 * `yield` costs several promise jobs per value, a measurable share of the adapter's CPU on a long
 * stream (one part per chunk); here a part already at hand costs one resolved promise. The
 * generator yields a batch per body read and is resumed only when the batch is spent, so
 * `return()` (a consumer's `break`) still runs its `finally` blocks, closing the connection.
 */
export class PartStream<Part> implements AsyncIterableIterator<Part> {
  readonly #batches: AsyncGenerator<readonly Part[], void, undefined>;
  #batch: readonly Part[] = [];
  #index = 0;
  /** A pull in progress: a `next()` called before it settles waits for it, as on a generator. */
  #pulling: Promise<IteratorResult<Part, undefined>> | null = null;

  constructor(batches: AsyncGenerator<readonly Part[], void, undefined>) {
    this.#batches = batches;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Part, undefined>> {
    if (this.#pulling) return this.#pulling.then(() => this.next());
    if (this.#index < this.#batch.length) {
      return Promise.resolve({ value: this.#batch[this.#index++] as Part, done: false });
    }
    // #pull clears this itself when it settles: it always awaits first, so never before this line.
    this.#pulling = this.#pull();
    return this.#pulling;
  }

  /**
   * The rest of the stream a batch (a body read) at a time, for a consumer that handles parts in a
   * plain loop (the runtime's model call): no promise per part at all. Parts already handed out by
   * `next()` are not repeated. Leaving the loop early closes the stream as `return()` does.
   */
  batches(): AsyncIterable<readonly Part[]> {
    if (this.#pulling) throw new Error("PartStream.batches() called while next() is pending");
    const rest = this.#batch.slice(this.#index);
    this.#batch = [];
    this.#index = 0;
    if (rest.length === 0) return this.#batches;
    const source = this.#batches;
    return (async function* () {
      let delegated = false;
      try {
        yield rest;
        delegated = true;
        yield* source;
      } finally {
        // Left while `rest` was out: the source, not yet delegated to, is closed here (`yield*`
        // passes a `return()` on to it itself).
        if (!delegated) await source.return(undefined);
      }
    })();
  }

  async return(): Promise<IteratorResult<Part, undefined>> {
    this.#batch = [];
    this.#index = 0;
    await this.#batches.return(undefined);
    return { value: undefined, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<Part, undefined>> {
    this.#batch = [];
    this.#index = 0;
    await this.#batches.throw(error);
    return { value: undefined, done: true };
  }

  async #pull(): Promise<IteratorResult<Part, undefined>> {
    try {
      for (;;) {
        const result = await this.#batches.next();
        if (result.done) {
          this.#batch = [];
          this.#index = 0;
          return { value: undefined, done: true };
        }
        this.#batch = result.value;
        this.#index = 0;
        if (this.#batch.length > 0) {
          return { value: this.#batch[this.#index++] as Part, done: false };
        }
      }
    } finally {
      this.#pulling = null;
    }
  }
}

/**
 * A stream's parts a batch at a time: its own batches when it has them (a PartStream), else each
 * part alone. For layers that pass a model's stream on (the gateway's): they keep the batches, so
 * the consumer at the end still pays no promise job per part.
 */
export function batchesOf<Part>(stream: AsyncIterable<Part>): AsyncIterable<readonly Part[]> {
  const batched = stream as AsyncIterable<Part> & {
    batches?: () => AsyncIterable<readonly Part[]>;
  };
  if (typeof batched.batches === "function") return batched.batches();
  return (async function* () {
    for await (const part of stream) yield [part];
  })();
}
