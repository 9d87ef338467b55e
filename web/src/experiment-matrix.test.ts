import { describe, expect, it } from "vitest";
import type { CellRun, CellSummary } from "./api-types.js";
import {
  categoryTally,
  compareCells,
  formatCellDelta,
  formatInterval,
  formatRelativeChange,
  matrixCategories,
  onceEach,
  runOutcome,
  successLevel,
  toggleCompare,
} from "./experiment-matrix.js";

function cell(overrides: Partial<CellSummary> = {}): CellSummary {
  return {
    cell: "a",
    label: "A",
    runs: 4,
    successes: 3,
    success_rate: 0.75,
    success_ci: [0.3, 0.95],
    ttft_p50_ms: 100,
    ttft_p95_ms: 200,
    wall_p50_ms: 1000,
    wall_p95_ms: 2000,
    tokens_per_turn: 500,
    cached_share: 0.5,
    fallback_rate: 0.1,
    tool_error_rate: 0,
    cost_usd: 0.002,
    by_category: { simple: { runs: 3, successes: 2 }, irrelevance: { runs: 1, successes: 1 } },
    ...overrides,
  };
}

function run(overrides: Partial<CellRun> = {}): CellRun {
  return {
    session_id: "s",
    run_key: "a/x/1",
    scenario: "x",
    category: "simple",
    repetition: 1,
    incomplete: false,
    score: {
      tool_precision: 1,
      tool_recall: 1,
      argument_match: 1,
      irrelevance: null,
      answer: null,
      success: true,
      failures: [],
    },
    cost_usd: 0,
    ...overrides,
  };
}

describe("the experiment matrix", () => {
  it("orders categories as the suite schema does, unknown ones last", () => {
    const cells = [
      cell({
        by_category: { multi_turn: { runs: 1, successes: 0 }, zeta: { runs: 1, successes: 1 } },
      }),
      cell({
        by_category: { simple: { runs: 1, successes: 1 }, alpha: { runs: 1, successes: 1 } },
      }),
    ];
    expect(matrixCategories(cells)).toStrictEqual(["simple", "multi_turn", "alpha", "zeta"]);
    expect(matrixCategories([])).toStrictEqual([]);
  });

  it("tallies a category, with no rate when nothing ran", () => {
    expect(categoryTally(cell(), "simple")).toStrictEqual({ runs: 3, successes: 2, rate: 2 / 3 });
    expect(categoryTally(cell(), "parallel")).toStrictEqual({ runs: 0, successes: 0, rate: null });
  });

  it("bands success rates for colour", () => {
    expect([1, 0.9, 0.89, 0.7, 0.5, 0.4, 0.39, 0, null].map(successLevel)).toStrictEqual([
      "high",
      "high",
      "good",
      "good",
      "mid",
      "mid",
      "low",
      "low",
      "none",
    ]);
    expect(successLevel(Number.NaN)).toBe("none");
  });

  it("formats intervals", () => {
    expect(formatInterval([0.301, 0.954])).toBe("30–95%");
    expect(formatInterval(null)).toBe("—");
  });

  it("keeps at most two cells picked for comparison, the latest ones", () => {
    expect(toggleCompare([], "a", true)).toStrictEqual(["a"]);
    expect(toggleCompare(["a"], "b", true)).toStrictEqual(["a", "b"]);
    expect(toggleCompare(["a", "b"], "c", true)).toStrictEqual(["b", "c"]);
    expect(toggleCompare(["a", "b"], "a", false)).toStrictEqual(["b"]);
    expect(toggleCompare(["a"], "a", true)).toStrictEqual(["a"]);
  });
});

describe("comparing two cells", () => {
  it("gives each metric's delta and verdict by its direction", () => {
    const a = cell();
    const b = cell({
      cell: "b",
      success_rate: 0.5,
      ttft_p50_ms: 50,
      tokens_per_turn: 500,
      cached_share: 0.75,
      cost_usd: null,
      runs: 8,
    });
    const rows = Object.fromEntries(compareCells(a, b).map((row) => [row.key, row]));
    expect(rows.success_rate).toMatchObject({ delta: -0.25, verdict: "worse" });
    expect(formatCellDelta(rows.success_rate as never)).toBe("−25.0 pp");
    expect(rows.ttft_p50_ms).toMatchObject({ delta: -50, percent: -0.5, verdict: "better" });
    expect(formatCellDelta(rows.ttft_p50_ms as never)).toBe("−50 ms");
    expect(formatRelativeChange(rows.ttft_p50_ms?.percent ?? null)).toBe("−50.0%");
    expect(rows.tokens_per_turn).toMatchObject({ delta: 0, verdict: "same" });
    expect(rows.cached_share).toMatchObject({ verdict: "better" });
    expect(rows.runs).toMatchObject({ delta: 4, verdict: "neutral" });
    expect(rows.cost_usd).toMatchObject({ a: 0.002, b: null, delta: null, verdict: "unknown" });
    expect(formatCellDelta(rows.cost_usd as never)).toBe("—");
    expect(Object.keys(rows)).toHaveLength(11);
  });

  it("colours no timing difference between two under 5 ms, nor a share moving under a point", () => {
    const rows = Object.fromEntries(
      compareCells(
        cell({ ttft_p50_ms: 0.33, cached_share: 0.5 }),
        cell({ ttft_p50_ms: 0.34, cached_share: 0.505 }),
      ).map((row) => [row.key, row]),
    );
    expect(rows.ttft_p50_ms).toMatchObject({ verdict: "noise", note: "both under 5 ms" });
    expect(rows.cached_share).toMatchObject({ verdict: "noise", note: "under 1 percentage point" });
    // Above the floor a timing is judged.
    const slower = compareCells(cell({ ttft_p50_ms: 4 }), cell({ ttft_p50_ms: 40 }));
    expect(slower.find((row) => row.key === "ttft_p50_ms")).toMatchObject({
      verdict: "worse",
      note: null,
    });
  });

  it("formats a cost delta in dollars", () => {
    const rows = compareCells(cell({ cost_usd: 0.01 }), cell({ cost_usd: 0.035 }));
    const cost = rows.find((row) => row.key === "cost_usd");
    expect(cost && formatCellDelta(cost)).toBe("+$0.025");
  });
});

describe("a cell's runs", () => {
  it("lists a run that two pages both hold once, where it came first, as the later page has it", () => {
    const pending = run({ session_id: "r", incomplete: true, score: null });
    const done = run({ session_id: "r" });
    const other = run({ session_id: "o" });
    const shown = onceEach([pending, other, done]);
    expect(shown.map((item) => item.session_id)).toStrictEqual(["r", "o"]);
    expect(runOutcome(shown[0] as CellRun)).toBe("passed");
    expect(onceEach([])).toStrictEqual([]);
  });

  it("names each run's outcome", () => {
    const failed = run({
      session_id: "f",
      score: { ...(run().score as NonNullable<CellRun["score"]>), success: false },
    });
    const pending = run({ session_id: "p", incomplete: true, score: null });
    const passed = run({ session_id: "ok" });
    expect([failed, pending, passed].map(runOutcome)).toStrictEqual([
      "failed",
      "incomplete",
      "passed",
    ]);
  });
});
