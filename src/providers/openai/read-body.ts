import { ProviderStreamError } from "../errors.js";
import { type AttemptSignal, FINISHED, IDLE_TIMEOUT } from "./attempt-signal.js";

/**
 * How long a stream may go without progress. Bytes are not progress: an endpoint (or a proxy) can
 * send `: ping` comments or empty chunks forever. The reader's caller says when the decoded
 * stream progressed; only time spent waiting on the endpoint is counted, so a slow consumer is not
 * a silent stream.
 */
export class ProgressBudget {
  #waitedMs = 0;

  constructor(readonly limitMs: number) {}

  /** Content, a tool call or the finish arrived: the wait starts over. */
  progressed(): void {
    this.#waitedMs = 0;
  }

  get leftMs(): number {
    return Math.max(0, this.limitMs - this.#waitedMs);
  }

  spend(ms: number): void {
    this.#waitedMs += ms;
  }
}

/**
 * Aborts the attempt with IDLE_TIMEOUT once the budget is spent in a wait for bytes. One timer
 * serves the whole body and is checked only when it fires (at most once per budget), instead of
 * being set and cleared around every read: on a real stream a read is a chunk, and a timer per
 * chunk cost more than the rest of the read.
 */
class IdleWatch {
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** performance.now() when the pending read began; null while the consumer holds the bytes. */
  #waitingSince: number | null = null;

  constructor(
    readonly budget: ProgressBudget,
    readonly signal: AttemptSignal,
  ) {}

  waitStarted(at: number): void {
    this.#waitingSince = at;
    if (this.#timer === null) this.#timer = setTimeout(this.#check, this.budget.leftMs);
  }

  waitEnded(at: number): void {
    if (this.#waitingSince !== null) this.budget.spend(at - this.#waitingSince);
    this.#waitingSince = null;
  }

  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  readonly #check = (): void => {
    this.#timer = null;
    // Not waiting: the next read sets the timer again.
    if (this.#waitingSince === null) return;
    const leftMs = this.budget.leftMs - (performance.now() - this.#waitingSince);
    if (leftMs <= 0) this.signal.abort(IDLE_TIMEOUT);
    else this.#timer = setTimeout(this.#check, leftMs);
  };
}

/**
 * Reads a response body, failing with `idle_timeout` when the budget runs out while waiting for
 * bytes and with `connection_lost` when the connection dies; the caller's abort (or the call's
 * deadline) surfaces as its own reason. `close()` (which the caller must reach, in a `finally`)
 * cancels a body left unread, which closes the connection.
 *
 * A plain object with one promise per read, not an async generator: a generator's `yield` costs
 * extra promise jobs on every read, and on a real stream a read is often a single chunk.
 */
export class BodyReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #idle: IdleWatch;
  readonly #signal: AttemptSignal;
  #complete = false;
  #closed = false;
  /** performance.now() when the last bytes were handed to us, for honest time-to-first-token. */
  receivedAt = 0;

  constructor(
    body: ReadableStream<Uint8Array>,
    signal: AttemptSignal,
    readonly budget: ProgressBudget,
  ) {
    this.#reader = body.getReader();
    this.#idle = new IdleWatch(budget, signal);
    this.#signal = signal;
  }

  /** The next bytes, or null once the body is complete. */
  async read(): Promise<Uint8Array | null> {
    this.#idle.waitStarted(performance.now());
    let result: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;
    try {
      result = await this.#reader.read();
    } catch (error) {
      this.#signal.throwIfUserAborted();
      if (this.#signal.reason === IDLE_TIMEOUT) {
        throw new ProviderStreamError(
          "idle_timeout",
          `the model stream made no progress for ${this.budget.limitMs} ms (keep-alive comments and empty chunks do not count)`,
          { cause: error },
        );
      }
      throw new ProviderStreamError(
        "connection_lost",
        "the connection to the model endpoint was lost mid-stream",
        { cause: error },
      );
    }
    this.receivedAt = performance.now();
    this.#idle.waitEnded(this.receivedAt);
    if (result.done) {
      this.#complete = true;
      return null;
    }
    return result.value;
  }

  /** Stops the idle timer and cancels what is left of the body; safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#idle.stop();
    if (!this.#complete) this.#reader.cancel(FINISHED).catch(() => {});
    this.#signal.settle();
  }
}
