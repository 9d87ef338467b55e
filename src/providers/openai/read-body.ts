import { ProviderStreamError } from "../errors.js";
import { type AttemptSignal, IDLE_TIMEOUT } from "./attempt-signal.js";

export interface ReceivedBytes {
  bytes: Uint8Array;
  /** performance.now() when the bytes were handed to us, for honest time-to-first-token. */
  received_at: number;
}

/**
 * Reads a response body, failing with `idle_timeout` when no bytes arrive for `idleTimeoutMs`
 * and with `connection_lost` when the connection dies; the caller's abort surfaces as its own
 * reason. Leaving early (break, throw) cancels the body, which closes the connection.
 */
export async function* readBody(
  body: ReadableStream<Uint8Array>,
  signal: AttemptSignal,
  idleTimeoutMs: number,
): AsyncGenerator<ReceivedBytes, void, undefined> {
  const reader = body.getReader();
  let complete = false;
  try {
    for (;;) {
      // Only time spent waiting on the endpoint counts: a slow consumer is not a silent stream.
      const clearTimer = signal.startTimer(idleTimeoutMs, IDLE_TIMEOUT);
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        result = await reader.read();
      } catch (error) {
        signal.throwIfUserAborted();
        if (signal.reason === IDLE_TIMEOUT) {
          throw new ProviderStreamError(
            "idle_timeout",
            `the model stream sent nothing for ${idleTimeoutMs} ms`,
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
      if (result.done) {
        complete = true;
        return;
      }
      yield { bytes: result.value, received_at: performance.now() };
    }
  } finally {
    if (!complete) reader.cancel().catch(() => {});
  }
}
