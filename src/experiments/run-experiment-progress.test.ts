import { describe, expect, it } from "vitest";
import {
  type ExperimentProgress,
  formatDuration,
  formatProgressLine,
  ProgressReporter,
} from "./progress.js";

function state(done: number, overrides: Partial<ExperimentProgress> = {}): ExperimentProgress {
  return {
    done,
    total: 120,
    skipped: 3,
    failed_runs: 0,
    current: {
      run_key: "dual_agent · sim · sim/search/1",
      cell: "dual_agent · sim · sim",
      cell_label: "dual_agent · sim",
      scenario: "search",
      repetition: 1,
    },
    ...overrides,
  };
}

function recorder(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 200, write: (text: string) => writes.push(text) } };
}

describe("formatProgressLine", () => {
  it("draws the bar, the counts, the cell and the ETA", () => {
    expect(formatProgressLine(state(42), 12_000)).toBe(
      "[###-------] 42/120 runs · 3 skipped · cell dual_agent · sim · ETA 12s",
    );
    expect(formatProgressLine(state(120, { failed_runs: 2, skipped: 0 }), 0)).toBe(
      "[##########] 120/120 runs · 2 failed · cell dual_agent · sim",
    );
    expect(formatProgressLine(state(0, { skipped: 0, current: null }), null)).toBe(
      "[----------] 0/120 runs",
    );
    expect(formatDuration(125_000)).toBe("2m 05s");
    expect(formatDuration(3_720_000)).toBe("1h 02m");
  });
});

describe("ProgressReporter", () => {
  it("rewrites one line on a terminal, with an ETA at the pace of the runs after the first", () => {
    let now = 0;
    const { writes, stream } = recorder(true);
    const reporter = new ProgressReporter(stream, () => now);
    reporter.update(state(3, { current: null }));
    // The first runs took the start-up too (workers starting): no pace from them alone.
    now = 8_000;
    reporter.update(state(5));
    now = 9_000;
    reporter.update(state(6));
    now = 10_000;
    reporter.update(state(7));
    reporter.finish();
    expect(writes).toEqual([
      "\r[----------] 3/120 runs · 3 skipped\u001b[K",
      "\r[----------] 5/120 runs · 3 skipped · cell dual_agent · sim\u001b[K",
      "\r[----------] 6/120 runs · 3 skipped · cell dual_agent · sim\u001b[K",
      // 2 runs in the 2 s since the first seen, 113 to go (from the start it would read 5m 23s).
      "\r[----------] 7/120 runs · 3 skipped · cell dual_agent · sim · ETA 1m 53s\u001b[K",
      "\n",
    ]);
  });

  it("makes no pace of runs that end together, nor of the runs skipped at the start", () => {
    let now = 0;
    const { writes, stream } = recorder(true);
    const reporter = new ProgressReporter(stream, () => now);
    reporter.update(state(3, { current: null }));
    now = 5_000;
    // Four workers' first runs end in the same reading: no pace yet.
    reporter.update(state(7));
    now = 5_001;
    reporter.update(state(8));
    now = 6_000;
    reporter.update(state(9));
    expect(writes.map((line) => line.split(" · ETA ")[1] ?? null)).toEqual([
      null,
      null,
      null,
      // 2 runs in 1 s, 111 to go: 55.5 s.
      "56s\u001b[K",
    ]);
  });

  it("prints plain lines now and then without a terminal", () => {
    let now = 0;
    const { writes, stream } = recorder(false);
    const reporter = new ProgressReporter(stream, () => now);
    reporter.update(state(0, { skipped: 0, current: null }));
    for (let done = 1; done <= 120; done++) {
      now += 10;
      reporter.update(state(done, { skipped: 0 }));
    }
    reporter.finish();
    // The first finished run, then each tenth, the last one included.
    expect(writes.map((line) => line.split(" runs")[0])).toEqual([
      "[----------] 1/120",
      "[#---------] 12/120",
      "[##--------] 24/120",
      "[###-------] 36/120",
      "[####------] 48/120",
      "[#####-----] 60/120",
      "[######----] 72/120",
      "[#######---] 84/120",
      "[########--] 96/120",
      "[#########-] 108/120",
      "[##########] 120/120",
    ]);
    expect(writes.every((line) => line.endsWith("\n") && !line.includes("\r"))).toBe(true);
  });
});
