import { describe, expect, it } from "vitest";
import { manualClock } from "./manual-clock.js";
import { sampleMedian } from "./scale-measure.js";

/** A path whose runs cost `costs[i]` ms each on `clock` (the last cost repeats). */
function path(clock: { advance(ms: number): void }, costs: readonly number[]) {
  let calls = 0;
  return {
    run: () => {
      clock.advance(costs[Math.min(calls, costs.length - 1)] as number);
      calls++;
    },
    calls: () => calls,
  };
}

describe("sampleMedian", () => {
  it("times a path once more when its warm-up alone spent the budget, and reports that run", async () => {
    const clock = manualClock();
    // A cold first run (a file the OS has not cached yet), then warm ones.
    const slow = path(clock, [300, 20]);
    const sampled = await sampleMedian(slow.run, 5, 100, clock.now);
    expect(slow.calls()).toBe(2);
    expect(sampled).toEqual({ median_ms: 20, samples: 1 });
  });

  it("warms a cheap path up five times and reports the median of the runs after it", async () => {
    const clock = manualClock();
    const cheap = path(clock, [9, 9, 9, 9, 9, 1, 3, 2, 5, 4, 2, 1]);
    const sampled = await sampleMedian(cheap.run, 7, 1_000, clock.now);
    expect(cheap.calls()).toBe(12);
    expect(sampled).toEqual({ median_ms: 2, samples: 7 });
  });

  it("stops a slow path at the budget once it has three runs", async () => {
    const clock = manualClock();
    const slow = path(clock, [50, 30]);
    const sampled = await sampleMedian(slow.run, 50, 60, clock.now);
    // One warm-up run (50 ms, past the 40 that ends warming up), then three of 30 ms: 90 > 60.
    expect(slow.calls()).toBe(4);
    expect(sampled).toEqual({ median_ms: 30, samples: 3 });
  });

  it("refuses to sample nothing", async () => {
    await expect(sampleMedian(() => {}, 0)).rejects.toThrow(/samples must be at least 1, got 0/);
  });
});
