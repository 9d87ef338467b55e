import { describe, expect, it } from "vitest";
import { type ChatModelPart, hasBatches } from "../chat-model.js";
import { SimChatModel } from "./sim-chat-model.js";
import { collect, finishOf, partsOf, system, textOf, usageOf, user } from "./test-fixtures.js";

const request = { messages: [system(), user("Tell me something interesting")] };

/** Collects parts with the time each arrived, in ms since the first `next()`. */
async function timed(stream: AsyncIterable<ChatModelPart>) {
  const start = performance.now();
  const arrivals: { part: ChatModelPart; at: number }[] = [];
  for await (const part of stream) arrivals.push({ part, at: performance.now() - start });
  return arrivals;
}

describe("sim timing", () => {
  it("waits first_token_ms before the first delta and reports it as ttft", async () => {
    const model = new SimChatModel({ options: { first_token_ms: 60 } });
    const arrivals = await timed(model.stream(request));
    const parts = arrivals.map((arrival) => arrival.part);
    const firstToken = partsOf(parts, "first-token")[0];
    expect(firstToken?.ttft_ms).toBeGreaterThanOrEqual(55);
    expect(firstToken?.ttft_ms).toBeLessThan(500);
    expect(finishOf(parts).ttft_ms).toBe(firstToken?.ttft_ms);
    const firstDelta = arrivals.find((arrival) => arrival.part.type === "text-delta");
    expect(firstDelta?.at).toBeGreaterThanOrEqual(55);
    // The wait lies between the response's start and its first token, not before the start
    // (a measure that machine load can only lengthen, never shorten).
    const startedAt = partsOf(parts, "response-start")[0]?.at_ms ?? Number.NaN;
    expect((firstToken?.ttft_ms ?? 0) - startedAt).toBeGreaterThanOrEqual(55);
  });

  it("paces the deltas so the completion takes completion_tokens / tokens_per_second", async () => {
    const model = new SimChatModel({ options: { tokens_per_second: 400 } });
    const arrivals = await timed(model.stream(request));
    const parts = arrivals.map((arrival) => arrival.part);
    const tokens = usageOf(parts).usage.completion_tokens;
    const expectedMs = (tokens / 400) * 1000;
    expect(expectedMs).toBeGreaterThan(40); // the answer is long enough to measure
    const elapsed = finishOf(parts).elapsed_ms;
    expect(elapsed).toBeGreaterThanOrEqual(expectedMs * 0.9);
    expect(elapsed).toBeLessThan(expectedMs + 500);
    // Spread out, not all at the end: the last delta comes well after the first.
    const deltas = arrivals.filter((arrival) => arrival.part.type === "text-delta");
    const spread = (deltas.at(-1)?.at ?? 0) - (deltas[0]?.at ?? 0);
    expect(spread).toBeGreaterThan(expectedMs * 0.5);
  });

  it("stops promptly with the signal's reason when aborted during the first-token wait", async () => {
    const model = new SimChatModel({ options: { first_token_ms: 10_000 } });
    const controller = new AbortController();
    const reason = new Error("user cancelled");
    const seen: string[] = [];
    const start = performance.now();
    setTimeout(() => controller.abort(reason), 30);
    const consume = async () => {
      for await (const part of model.stream(request, { signal: controller.signal })) {
        seen.push(part.type);
      }
    };
    await expect(consume()).rejects.toBe(reason);
    expect(performance.now() - start).toBeLessThan(1_000);
    expect(seen).toEqual(["response-start"]);
  });

  it("stops promptly with the signal's reason when aborted while pacing", async () => {
    const model = new SimChatModel({ options: { tokens_per_second: 10 } });
    const controller = new AbortController();
    const reason = new Error("stop now");
    const seen: string[] = [];
    const start = performance.now();
    const consume = async () => {
      for await (const part of model.stream(request, { signal: controller.signal })) {
        seen.push(part.type);
        if (part.type === "text-delta") controller.abort(reason);
      }
    };
    await expect(consume()).rejects.toBe(reason);
    expect(performance.now() - start).toBeLessThan(1_000);
    expect(seen.filter((type) => type === "text-delta")).toHaveLength(1);
    expect(seen).not.toContain("finish");
  });

  it("throws the reason of an already aborted signal before any part", async () => {
    const controller = new AbortController();
    controller.abort(new Error("too late"));
    await expect(
      collect(new SimChatModel().stream(request, { signal: controller.signal })),
    ).rejects.toThrow("too late");
  });

  it("streams everything at once with the defaults", async () => {
    const parts = await collect(new SimChatModel().stream(request));
    expect(textOf(parts).length).toBeGreaterThan(0);
    expect(finishOf(parts).elapsed_ms).toBeLessThan(100);
  });

  it("hands out at once what is due at once: a call at zero latency is one batch", async () => {
    const batches = await batchesOf(new SimChatModel().stream(request));
    expect(batches).toHaveLength(1);
    const [only = []] = batches;
    expect(only[0]).toBe("response-start");
    expect(only.filter((type) => type === "text-delta").length).toBeGreaterThan(1);
    expect(only.at(-1)).toBe("finish");
  });

  it("hands out what it has before each wait: the start before the first token, a paced delta alone", async () => {
    const waiting = await batchesOf(
      new SimChatModel({ options: { first_token_ms: 20 } }).stream(request),
    );
    expect(waiting[0]).toEqual(["response-start"]);
    expect(waiting).toHaveLength(2);
    const paced = await batchesOf(
      new SimChatModel({ options: { tokens_per_second: 1_000 } }).stream(request),
    );
    const deltas = paced.flat().filter((type) => type === "text-delta").length;
    // The first delta is due with the first token; each later one comes in a read of its own
    // unless a late timer (or a pause of the process) made several due at once.
    expect(paced[0]?.slice(0, 3)).toEqual(["response-start", "first-token", "text-delta"]);
    expect(paced.length).toBeGreaterThan(1);
    expect(paced.length).toBeLessThanOrEqual(deltas + 1);
    expect(paced.flat().filter((type) => type === "first-token")).toHaveLength(1);
    expect(paced.at(-1)?.at(-1)).toBe("finish");
  });
});

/** A stream's parts' types, as the batches its reader gets them in. */
async function batchesOf(stream: AsyncIterable<ChatModelPart>): Promise<string[][]> {
  if (!hasBatches(stream)) throw new Error("the sim's stream is not read in batches");
  const batches: string[][] = [];
  for await (const batch of stream.batches()) batches.push(batch.map((part) => part.type));
  return batches;
}
