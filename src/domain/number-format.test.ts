import { describe, expect, it } from "vitest";
import { formatMs as webFormatMs } from "../../web/src/format.js";
import { formatMs as cliFormatMs } from "../cli/output.js";
import { formatMilliseconds as reportFormatMs } from "../experiments/report-format.js";
import { renderHtmlReport } from "../experiments/report-html.js";
import type { CellSummary, ExperimentReport } from "./experiment.js";
import { formatDuration, roundTicks } from "./number-format.js";

describe("formatDuration: ms below 1 s, s above, three significant digits", () => {
  it.each([
    [0, "0 ms"],
    [0.44, "0.4 ms"],
    [3.45, "3.5 ms"],
    [9.96, "10 ms"],
    [85.4, "85 ms"],
    [850, "850 ms"],
    [999.4, "999 ms"],
    [999.7, "1.00 s"],
    [1240, "1.24 s"],
    [9994, "9.99 s"],
    [9996, "10.0 s"],
    [12_345, "12.3 s"],
    [59_940, "59.9 s"],
    [59_960, "1 min 0 s"],
    [125_000, "2 min 5 s"],
    [-850, "-850 ms"],
  ])("%s ms → %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("writes a missing measurement as the face's placeholder", () => {
    expect(formatDuration(null)).toBe("–");
    expect(formatDuration(undefined, "—")).toBe("—");
    expect(formatDuration(Number.NaN)).toBe("–");
  });

  it("is the format of the CLI, the web UI and the experiment reports alike", () => {
    for (const ms of [0.25, 4, 12, 120.4, 340, 850, 999.7, 1500, 12_345, 75_000]) {
      const text = formatDuration(ms);
      expect([cliFormatMs(ms), webFormatMs(ms), reportFormatMs(ms)], String(ms)).toEqual([
        text,
        text,
        text,
      ]);
    }
  });
});

describe("roundTicks", () => {
  it.each([
    [1, [0, 0.25, 0.5, 0.75, 1]],
    [12_345, [0, 5000, 10_000, 15_000]],
    [340, [0, 100, 200, 300, 400]],
    [1234.4, [0, 500, 1000, 1500]],
    [0.3, [0, 0.1, 0.2, 0.3]],
    [7, [0, 2, 4, 6, 8]],
    [0, [0, 1]],
  ])("0..%s → %j", (max, ticks) => {
    expect(roundTicks(max)).toEqual(ticks);
  });

  it("report.html labels its axes with round ticks", () => {
    const cell = (label: string, wall: number): CellSummary => ({
      cell: label,
      label,
      runs: 4,
      successes: 3,
      success_rate: 0.75,
      success_ci: [0.3, 0.95],
      ttft_p50_ms: 120.4,
      ttft_p95_ms: 343,
      wall_p50_ms: 850,
      wall_p95_ms: wall,
      tokens_per_turn: 1234.4,
      cached_share: 0.42,
      fallback_rate: 0,
      tool_error_rate: 0,
      cost_usd: null,
      cost_source: "unknown",
      by_category: {},
    });
    const report: ExperimentReport = {
      experiment_id: "e-1",
      suite: "bundled",
      generated_at: "2025-01-02T03:04:05.000Z",
      simulated: true,
      cells: [cell("a", 12_345), cell("b", 3000)],
      runs: [],
    };
    const labels = [
      ...renderHtmlReport(report).matchAll(/<text class="muted"[^>]*>([^<]*)<\/text>/g),
    ].map((match) => match[1]);
    // TTFT axis (0..343 ms), wall axis (0..12.3 s), tokens (0..1234): no 85.75 ms, 3.09 s, 309.
    expect(labels).toEqual(
      expect.arrayContaining(["100 ms", "400 ms", "5.00 s", "15.0 s", "1,500"]),
    );
    for (const label of labels) expect(label).not.toMatch(/^(85|3\.09|308|309)/);
  });
});
