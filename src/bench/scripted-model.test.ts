import { describe, expect, it } from "vitest";
import { type ChatModel, type ChatModelPart, hasBatches } from "../providers/chat-model.js";
import { PartStream } from "../providers/part-stream.js";
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
  it("does all of a call's work inside the first `next()`: the whole response is written by then", async () => {
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
    const pending = iterator.next();
    // Before the first part is even handed out, the last chunk is on the wire: all of the sim's
    // work runs inside the `next()` that asks for its batch, where the benchmarks time it.
    expect(pieces.join("")).toContain("[DONE]");
    expect((await pending).value?.type).toBe("response-start");
    const types: string[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      types.push(next.value.type);
    }
    expect(types.filter((type) => type === "text-delta").length).toBeGreaterThan(1);
    expect(types.at(-1)).toBe("finish");
  });
});

describe("TimedModel around a stream read in batches", () => {
  it("keeps the batches and counts the time inside each batch's `next()` as the model's", async () => {
    const clock = manualClock();
    const batched = batchedModel(async function* () {
      for (let batch = 0; batch < 3; batch++) {
        clock.advance(7);
        yield [0, 1].map(
          (index): ChatModelPart => ({
            type: "text-delta",
            text: `${batch}.${index}`,
          }),
        );
      }
    });
    const stream = new TimedModel(batched, clock.now).stream({ messages: [] });
    if (!hasBatches(stream)) throw new Error("the timed stream lost its batches");
    const seen: string[][] = [];
    for await (const batch of stream.batches()) {
      void Promise.resolve().then(() => clock.advance(25));
      seen.push(batch.map((part) => (part.type === "text-delta" ? part.text : part.type)));
    }
    expect(seen).toEqual([
      ["0.0", "0.1"],
      ["1.0", "1.1"],
      ["2.0", "2.1"],
    ]);
    const timed = new TimedModel(batched, clock.now);
    const texts: string[] = [];
    for await (const part of timed.stream({ messages: [] })) {
      if (part.type === "text-delta") texts.push(part.text);
    }
    expect(texts).toEqual(["0.0", "0.1", "1.0", "1.1", "2.0", "2.1"]);
    // Three batches of 7 ms each, none of the caller's 25 ms between them.
    expect(timed.spent_ms).toBe(21);
  });
});

describe("TimedModel, left early", () => {
  it("closes the wrapped model's batched stream, its time counted up to there", async () => {
    const clock = manualClock();
    let closed = false;
    const batched = batchedModel(async function* () {
      try {
        for (;;) {
          clock.advance(3);
          yield [{ type: "text-delta", text: "more" } satisfies ChatModelPart];
        }
      } finally {
        closed = true;
      }
    });
    const timed = new TimedModel(batched, clock.now);
    let parts = 0;
    for await (const _ of timed.stream({ messages: [] })) {
      if (++parts === 2) break;
    }
    expect(closed).toBe(true);
    expect(timed.spent_ms).toBe(6);
  });
});

/** A model whose every call reads `batches` anew, a batch at a time, as an adapter's reads. */
function batchedModel(
  batches: () => AsyncGenerator<readonly ChatModelPart[], void, undefined>,
): ChatModel {
  return {
    provider: "sim",
    model: "batched",
    simulated: true,
    stream: () => new PartStream(batches()),
  };
}
