import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { sampleMedian } from "./scale-measure.js";

/** A path whose first run is slow (cold caches) and whose later runs cost nothing. */
function coldThenWarm(coldMs: number): { run: () => Promise<void>; calls: () => number } {
  let calls = 0;
  return {
    run: async () => {
      calls++;
      if (calls === 1) await sleep(coldMs);
    },
    calls: () => calls,
  };
}

describe("sampleMedian", () => {
  it("times a path once more when its warm-up alone spent the budget, and reports that run", async () => {
    const path = coldThenWarm(300);
    const sampled = await sampleMedian(path.run, 5, 100);
    expect(path.calls()).toBe(2);
    expect(sampled.samples).toBe(1);
    // The warm-up took at least 300 ms; the run after it costs nothing.
    expect(sampled.median_ms).toBeLessThan(300);
  });

  it("warms a cheap path up and reports the median of the runs after it", async () => {
    const path = coldThenWarm(0);
    const sampled = await sampleMedian(path.run, 7, 1_000);
    expect(sampled.samples).toBe(7);
    // Up to five warm-up runs (fewer if the machine stalls one past 40 ms), then the seven timed.
    expect(path.calls() - sampled.samples).toBeGreaterThanOrEqual(1);
    expect(path.calls() - sampled.samples).toBeLessThanOrEqual(5);
  });

  it("stops a slow path at the budget once it has three runs", async () => {
    let calls = 0;
    const sampled = await sampleMedian(
      async () => {
        calls++;
        await sleep(30);
      },
      50,
      60,
    );
    expect(sampled.samples).toBe(3);
    // The warm-up ran at least once before the three timed runs.
    expect(calls - sampled.samples).toBeGreaterThanOrEqual(1);
    expect(sampled.median_ms).toBeGreaterThanOrEqual(29);
  });
});
