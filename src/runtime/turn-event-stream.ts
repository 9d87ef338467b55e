import { EventChannel } from "./event-channel.js";

/** A started turn, as its event stream sees it. */
export interface RunningTurn {
  /** Settles once the turn's work is over; a rejection is the consumer's error (the channel's). */
  done: Promise<void>;
  /** Stops the turn's work: its consumer has stopped listening. */
  stop(reason: Error): void;
}

/**
 * What `runTurn` returns: an async generator's interface over the turn's event channel, written
 * out rather than an `async function*` that `yield*`s the channel. A turn streams dozens of events
 * (every text delta), and the generator's delegation cost each one two more promises and their
 * jobs on the consumer's side. As a generator does, it starts the turn at the first `next()`, not
 * before, and answers `next()` calls made at once in order; `return()` (a `break`, a throw in the
 * consumer's loop) stops a turn still at work and waits for its work to end, and every `next()`
 * after it is done. Unlike the generator, `throw(error)` stops the turn the same way and then
 * rejects with `error` (the generator's delegation rejected with a TypeError: the channel has no
 * `throw`).
 */
export class TurnEventStream<Item> implements AsyncGenerator<Item, void, undefined> {
  readonly #channel = new EventChannel<Item>();
  readonly #items = this.#channel[Symbol.asyncIterator]();
  readonly #start: (push: (item: Item) => void) => RunningTurn;
  #running: RunningTurn | null = null;
  /** The turn's work is over (its channel closed or failed): nothing left to stop. */
  #settled = false;
  /** Returned from: every `next()` is done, whatever the turn left in the channel. */
  #returned = false;

  /** `start` runs the turn, pushing its events; the channel closes (or fails) when it settles. */
  constructor(start: (push: (item: Item) => void) => RunningTurn) {
    this.#start = start;
  }

  next(): Promise<IteratorResult<Item, void>> {
    if (this.#returned) return Promise.resolve({ value: undefined, done: true });
    if (this.#running === null) {
      const channel = this.#channel;
      const running = this.#start((item) => channel.push(item));
      running.done.then(
        () => {
          this.#settled = true;
          channel.close();
        },
        (error: unknown) => {
          this.#settled = true;
          channel.fail(error);
        },
      );
      this.#running = running;
    }
    return this.#items.next();
  }

  async return(): Promise<IteratorResult<Item, void>> {
    this.#returned = true;
    const running = this.#running;
    if (running !== null) {
      if (!this.#settled) running.stop(new Error("the turn's consumer stopped listening"));
      await running.done.catch(() => {});
    }
    await this.#items.return?.();
    return { value: undefined, done: true };
  }

  async throw(error: unknown): Promise<IteratorResult<Item, void>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
