import { describe, expect, it } from "vitest";
import { PartStream } from "./part-stream.js";

/** Batches that arrive only after a macrotask, so a pull is still pending when `next()` is called. */
async function* slowBatches(batches: number[][], log: string[]): AsyncGenerator<number[]> {
  try {
    for (const batch of batches) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      yield batch;
    }
  } finally {
    log.push("closed");
  }
}

describe("PartStream", () => {
  it("hands out every part in order, even to next() calls made before a pull settles", async () => {
    const log: string[] = [];
    const stream = new PartStream(slowBatches([[1, 2], [], [3]], log));
    const pending = [stream.next(), stream.next(), stream.next(), stream.next()];
    const results = await Promise.all(pending);
    expect(results).toEqual([
      { value: 1, done: false },
      { value: 2, done: false },
      { value: 3, done: false },
      { value: undefined, done: true },
    ]);
    expect(log).toEqual(["closed"]);
  });

  it("runs the source's finally on return(), mid-batch", async () => {
    const log: string[] = [];
    const stream = new PartStream(slowBatches([[1, 2], [3]], log));
    expect(await stream.next()).toEqual({ value: 1, done: false });
    expect(await stream.return()).toEqual({ value: undefined, done: true });
    expect(log).toEqual(["closed"]);
  });

  it("passes a source's failure on, and a later next() is not stuck behind it", async () => {
    async function* failing(): AsyncGenerator<number[]> {
      yield [1];
      throw new Error("stream lost");
    }
    const stream = new PartStream(failing());
    expect(await stream.next()).toEqual({ value: 1, done: false });
    await expect(stream.next()).rejects.toThrow("stream lost");
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});

describe("PartStream.batches", () => {
  it("hands on the rest a batch at a time, after what next() already gave", async () => {
    const log: string[] = [];
    const stream = new PartStream(slowBatches([[1, 2, 3], [4], [5, 6]], log));
    expect(await stream.next()).toEqual({ value: 1, done: false });
    const seen: (readonly number[])[] = [];
    for await (const batch of stream.batches()) seen.push(batch);
    expect(seen).toEqual([[2, 3], [4], [5, 6]]);
    expect(log).toEqual(["closed"]);
  });

  it("closes the source when the consumer leaves early", async () => {
    const log: string[] = [];
    const stream = new PartStream(slowBatches([[1], [2], [3]], log));
    for await (const batch of stream.batches()) {
      expect(batch).toEqual([1]);
      break;
    }
    expect(log).toEqual(["closed"]);
  });

  it("closes the source when the consumer leaves at the parts next() left over", async () => {
    const log: string[] = [];
    const stream = new PartStream(slowBatches([[1, 2, 3], [4]], log));
    expect(await stream.next()).toEqual({ value: 1, done: false });
    for await (const batch of stream.batches()) {
      expect(batch).toEqual([2, 3]);
      break;
    }
    expect(log).toEqual(["closed"]);
  });

  it("refuses to start while a next() is still pending, rather than lose its part", async () => {
    const stream = new PartStream(slowBatches([[1]], []));
    const pending = stream.next();
    expect(() => stream.batches()).toThrow(/next\(\) is pending/);
    await pending;
  });
});
