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
  let complete = false;
  try {
    for (;;) {
      const clearTimer = signal.startTimer(budget.leftMs, IDLE_TIMEOUT);
      const waitStart = performance.now();
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
      } finally {
        clearTimer();
      }
      const receivedAt = performance.now();
      budget.spend(receivedAt - waitStart);
      if (result.done) {
        complete = true;
        return;
      }
      yield { bytes: result.value, received_at: receivedAt };
    }
  } finally {
    if (!complete) reader.cancel(FINISHED).catch(() => {});
    signal.settle();
  }
}
