import { ProviderStreamError } from "../errors.js";
import { type AttemptSignal, FINISHED, IDLE_TIMEOUT } from "./attempt-signal.js";

export interface ReceivedBytes {
  bytes: Uint8Array;
  /** performance.now() when the bytes were handed to us, for honest time-to-first-token. */
  received_at: number;
}

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
 * deadline) surfaces as its own reason. Leaving early (break, throw) cancels the body, which
 * closes the connection.
 */
export async function* readBody(
  body: ReadableStream<Uint8Array>,
  signal: AttemptSignal,
  budget: ProgressBudget,
): AsyncGenerator<ReceivedBytes, void, undefined> {
  const reader = body.getReader();
  const idle = new IdleWatch(budget, signal);
  let complete = false;
  try {
    for (;;) {
      idle.waitStarted(performance.now());
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        result = await reader.read();
      } catch (error) {
        signal.throwIfUserAborted();
        if (signal.reason === IDLE_TIMEOUT) {
          throw new ProviderStreamError(
            "idle_timeout",
            `the model stream made no progress for ${budget.limitMs} ms (keep-alive comments and empty chunks do not count)`,
            { cause: error },
          );
        }
        throw new ProviderStreamError(
          "connection_lost",
          "the connection to the model endpoint was lost mid-stream",
          { cause: error },
        );
      }
      const receivedAt = performance.now();
      idle.waitEnded(receivedAt);
      if (result.done) {
        complete = true;
        return;
      }
      yield { bytes: result.value, received_at: receivedAt };
    }
  } finally {
    idle.stop();
    if (!complete) reader.cancel(FINISHED).catch(() => {});
    signal.settle();
  }
}
