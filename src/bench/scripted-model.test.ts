import { describe, expect, it } from "vitest";
import type { ChatModel, ChatModelPart } from "../providers/chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { manualClock } from "./manual-clock.js";
import { TimedModel } from "./scripted-model.js";

/** A model whose every part costs `partMs` on `clock`, spent inside `next()`. */
function busyModel(parts: number, partMs: number, clock: { advance(ms: number): void }): ChatModel {
  return {
    provider: "sim",
    model: "busy",
    simulated: true,
    async *stream() {
      for (let index = 0; index < parts; index++) {
        clock.advance(partMs);
        yield { type: "text-delta", text: `${index}` } satisfies ChatModelPart;
      }
    },
  };
}

describe("TimedModel", () => {
  it("counts the model's own work and not what the caller queued before asking", async () => {
    const clock = manualClock();
    const timed = new TimedModel(busyModel(4, 5, clock), clock.now);
    const iterator = timed.stream({ messages: [] })[Symbol.asyncIterator]();
    let parts = 0;
    for (;;) {
      // As a lab handing each part on: its consumer's jobs are queued when the next part is asked.
      void Promise.resolve().then(() => clock.advance(25));
      const next = await iterator.next();
      if (next.done) break;
      parts++;
    }
    expect(parts).toBe(4);
    // The model's 4 x 5 ms, none of the caller's 5 x 25 (timed to its await's end, it read 145).
    expect(timed.spent_ms).toBe(20);
  });
});

describe("the sim at zero latency", () => {
  it("writes a delta's chunk inside the call that asks for it, without waiting a turn", async () => {
    const pieces: string[] = [];
    const capture = {
      request: () => {},
      response: (piece: Uint8Array | string) => {
        pieces.push(typeof piece === "string" ? piece : Buffer.from(piece).toString());
      },
    };
    const request = {
      messages: [{ role: "user" as const, content: "hello there", tool_calls: [] }],
    };
    const iterator = new SimChatModel({}).stream(request, { capture })[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.type).toBe("response-start");
    expect((await iterator.next()).value?.type).toBe("first-token");
    const written = pieces.length;
    const pending = iterator.next();
    // The first delta's chunk is on the wire before the call returns: all of the sim's work for
    // a part runs inside `next()`, where the benchmarks time it.
    expect(pieces.length).toBe(written + 1);
    expect(pieces.at(-1)).toContain('"content"');
    expect((await pending).value?.type).toBe("text-delta");
  });
});
