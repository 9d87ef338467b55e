import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type {
  ExperimentRunEvent,
  RunningExperiment,
  RunningExperiments,
} from "./running-experiments.js";

/**
 * A running experiment's progress as server-sent events: `progress` (the current state first, so
 * a late watcher starts from where it is), then one of `done`, `cancelled` or `error`, then the
 * stream ends. Each event's data is its payload as one line of JSON. Progress events that arrive
 * while a write is in flight are folded into the latest (a watcher needs the state, not each
 * step); the end is always sent. A watcher leaving changes nothing: the experiment runs on.
 */

function payloadOf(event: ExperimentRunEvent): unknown {
  switch (event.type) {
    case "progress":
    case "cancelled":
      return event.progress;
    case "done":
      return { outcome: event.outcome };
    case "error":
      return { message: event.message };
  }
}

export function formatExperimentEvent(event: ExperimentRunEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(payloadOf(event))}\n\n`;
}

export function streamExperimentEvents(
  c: Context,
  experiment: RunningExperiment,
  registry: RunningExperiments,
  heartbeatMs: number,
): Response {
  c.header("X-Accel-Buffering", "no");
  const closed = registry.openStream();
  return streamSSE(c, async (stream) => {
    let latest: ExperimentRunEvent | null = null;
    let end: ExperimentRunEvent | null = null;
    let wake: () => void = () => {};
    const next = () =>
      new Promise<void>((resolve) => {
        wake = resolve;
      });
    let waiting = next();
    const stop = experiment.watch((event) => {
      if (event.type === "progress") latest = event;
      else end = event;
      wake();
    });
    stream.onAbort(() => {
      stop();
      wake();
    });
    const heartbeat = setInterval(() => {
      void stream.write(": keep-alive\n\n");
    }, heartbeatMs);
    try {
      while (!stream.aborted) {
        const progress: ExperimentRunEvent | null = latest;
        latest = null;
        if (progress !== null) await stream.write(formatExperimentEvent(progress));
        const finished: ExperimentRunEvent | null = end;
        if (finished !== null) {
          await stream.write(formatExperimentEvent(finished));
          break;
        }
        if (latest === null) {
          await waiting;
          waiting = next();
        }
      }
    } finally {
      clearInterval(heartbeat);
      stop();
      closed();
    }
  });
}

/** One `idle` event (nothing runs under that id here: the store's counts), then the end. */
export function streamIdle(c: Context, counts: Record<string, unknown>): Response {
  return streamSSE(c, async (stream) => {
    await stream.write(`event: idle\ndata: ${JSON.stringify(counts)}\n\n`);
  });
}
