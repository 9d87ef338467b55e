import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { TurnEvent } from "../domain/turn-events.js";
import { INTERNAL_ERROR_MESSAGE } from "./http-errors.js";

/** A comment line now and then keeps proxies from timing out a quiet turn (a long tool call). */
export const DEFAULT_HEARTBEAT_MS = 15_000;

/** Above this many buffered bytes the turn waits for the client to read (backpressure). */
const MAX_BUFFERED_BYTES = 64 * 1024;

export interface TurnStreamOptions {
  /** The client went away: cancel the turn (it is still stored, as cancelled). */
  onDisconnect(): void;
  /** The stream is over and the turn has ended, however it ended. */
  onEnd(): void;
  /** The turn threw after it started: the client gets an `error` event, this gets the cause. */
  onError(error: unknown): void;
  heartbeatMs?: number;
}

/**
 * One SSE event: named by the TurnEvent's `type`, its data the event as one line of JSON
 * (JSON.stringify escapes every newline inside strings).
 */
export function formatTurnEvent(event: TurnEvent | { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The one place turn events become server-sent events. The first event was awaited by the route
 * (so that a refused turn could still answer with a JSON error); the rest are read until the turn
 * ends, even after the client has gone, so the turn is always stored. Events are written once per
 * turn of the event loop: all that arrived since (a model's read of many deltas, or a whole turn on
 * the instant sim, which never waits) go out as one write, and so do those that arrive while a
 * write is in flight. Each write passes through Hono's web stream and Node's response, a cost per
 * write: an instant sim turn over HTTP was about 60 writes, and took 6.2-7.5 ms more than in-process
 * against 3.5-5.7 ms with one (`npm run bench -- server`).
 */
export function streamTurnEvents<Event extends { type: string } = TurnEvent>(
  c: Context,
  first: Event,
  rest: AsyncIterator<Event>,
  options: TurnStreamOptions,
): Response {
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => options.onDisconnect());
    let buffered = "";
    let writing: Promise<void> | null = null;
    const drain = async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (buffered !== "" && !stream.aborted) {
        const chunk = buffered;
        buffered = "";
        await stream.write(chunk);
      }
      buffered = "";
      writing = null;
    };
    const send = async (text: string) => {
      if (stream.aborted) return;
      buffered += text;
      writing ??= drain();
      if (buffered.length > MAX_BUFFERED_BYTES) await writing;
    };
    const heartbeat = setInterval(() => {
      void send(": keep-alive\n\n");
    }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    try {
      await send(formatTurnEvent(first));
      for (;;) {
        const next = await rest.next();
        if (next.done) break;
        await send(formatTurnEvent(next.value));
      }
    } catch (error) {
      options.onError(error);
      await send(
        formatTurnEvent({ type: "error", code: "internal_error", message: INTERNAL_ERROR_MESSAGE }),
      );
    } finally {
      clearInterval(heartbeat);
      await writing;
      options.onEnd();
    }
  });
}
