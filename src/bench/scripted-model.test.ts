import { describe, expect, it } from "vitest";
import type { ChatModel, ChatModelPart } from "../providers/chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { TimedModel } from "./scripted-model.js";

/** Busy for `ms`: work of the caller's that a timer must not count as the model's. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Spinning on purpose: the work has to take wall time on this thread.
  }
}

/** A model whose every part costs `partMs` of its own, spent inside `next()`. */
function busyModel(parts: number, partMs: number): ChatModel {
  return {
    provider: "sim",
    model: "busy",
    simulated: true,
    async *stream() {
      for (let index = 0; index < parts; index++) {
        spin(partMs);
        yield { type: "text-delta", text: `${index}` } satisfies ChatModelPart;
      }
    },
  };
}

/** Drains `stream`, queueing `callerMs` of the caller's own work before asking for each part. */
async function drainWithQueuedWork(
  stream: AsyncIterable<ChatModelPart>,
  callerMs: number,
): Promise<number> {
  const iterator = stream[Symbol.asyncIterator]();
  let parts = 0;
  for (;;) {
    // As a lab handing each part on: its consumer's jobs are queued when the next part is asked.
    void Promise.resolve().then(() => spin(callerMs));
    const next = await iterator.next();
    if (next.done) return parts;
    parts++;
  }
}

describe("TimedModel", () => {
  it("counts the model's own work and not what the caller queued before asking", async () => {
    const timed = new TimedModel(busyModel(4, 5));
    const parts = await drainWithQueuedWork(timed.stream({ messages: [] }), 25);
    expect(parts).toBe(4);
    // The model spent 4 x 5 ms; the caller queued 5 x 25 ms around its calls.
    expect(timed.spent_ms).toBeGreaterThanOrEqual(19);
    expect(timed.spent_ms).toBeLessThan(60);
  });

  it("sees all of the sim's work at zero latency inside its calls", async () => {
    const timed = new TimedModel(new SimChatModel({}));
    const request = {
      messages: [
        { role: "user" as const, content: "search for the weather in Paris", tool_calls: [] },
      ],
    };
    // Once first, so the count below is a warm call's, not the first call's compiling.
    await drainWithQueuedWork(timed.stream(request), 0);
    timed.spent_ms = 0;
    const parts = await drainWithQueuedWork(timed.stream(request), 10);
    expect(parts).toBeGreaterThan(3);
    // The caller queued over 40 ms of its own; a timer counting it would read past that.
    expect(timed.spent_ms).toBeLessThan(10 * parts);
    expect(timed.spent_ms).toBeGreaterThan(0);
  });
});
