import { describe, expect, it } from "vitest";
import type { QueueCounts, RunQueue } from "../store/run-queue.js";
import { watchQueue } from "./queue-progress.js";

const COUNTS: QueueCounts = {
  total: 4,
  pending: 2,
  claimed: 0,
  done: 2,
  failed: 0,
  errors: 0,
  reclaimed: 0,
  last: null,
  next_expiry_ms: null,
};

/** A queue whose counts fail while the database is away (`down` readings), then come back. */
function flakyQueue(down: number): RunQueue {
  let calls = 0;
  return {
    counts: async () => {
      calls++;
      if (calls <= down) throw new Error("the database system is shutting down");
      return COUNTS;
    },
  } as unknown as RunQueue;
}

describe("watchQueue while the database restarts", () => {
  it("skips the readings that fail, without an unhandled rejection, and goes on reading", async () => {
    const seen: QueueCounts[] = [];
    const watch = watchQueue(flakyQueue(2), "e1", 10, (counts) => seen.push(counts));
    // Until a reading gets through, past the two that fail, however late a loaded machine runs
    // the interval: a fixed 80 ms could see a single reading, and stop's own, the second, failed.
    const deadline = performance.now() + 10_000;
    while (seen.length === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await watch.stop();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toBe(COUNTS);
  });

  it("stop throws when the last reading fails, so the command can say so", async () => {
    const watch = watchQueue(flakyQueue(Number.POSITIVE_INFINITY), "e1", 10, () => {});
    await new Promise((resolve) => setTimeout(resolve, 40));
    await expect(watch.stop()).rejects.toThrow("the database system is shutting down");
  });
});
