import { describe, expect, it } from "vitest";
import type { RunResult, ScenarioCategory, TurnFacts } from "../domain/experiment.js";
import { summarizeCell } from "./summarize.js";

function turn(overrides: Partial<TurnFacts> = {}): TurnFacts {
  return {
    status: "completed",
    answer: "ok",
    rounds: 1,
    tool_calls: [],
    ttft_ms: null,
    wall_time_ms: null,
    prompt_tokens: 0,
    cached_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    fallback_count: 0,
    tool_count: 0,
    ...overrides,
  };
}

function run(
  scenario: string,
  category: ScenarioCategory,
  success: boolean,
  turns: TurnFacts[],
  cost_usd: number | null = 0,
): RunResult {
  return {
    session_id: `session-${scenario}`,
    run_key: `cell/${scenario}/1`,
    cell: "cell",
    scenario,
    category,
    repetition: 1,
    turns,
    score: {
      tool_precision: 1,
      tool_recall: 1,
      argument_match: 1,
      irrelevance: null,
      answer: null,
      success,
      failures: success ? [] : ["turn 1: something"],
    },
    cost_usd,
    cost_source: cost_usd === null ? "unknown" : "estimated",
  };
}

const tool = (ok: boolean | null, used_fallback = false) => ({
  name: "mock_search",
  arguments: { query: "q" },
  ok,
  used_fallback,
});

describe("summarizeCell", () => {
  it("sums up the runs of one cell", () => {
    const runs = [
      run(
        "a",
        "simple",
        true,
        [
          turn({
            ttft_ms: 10,
            wall_time_ms: 100,
            prompt_tokens: 100,
            cached_tokens: 50,
            completion_tokens: 20,
            total_tokens: 120,
            tool_calls: [tool(true, true)],
            fallback_count: 1,
            tool_count: 1,
          }),
        ],
        0.001,
      ),
      run(
        "b",
        "simple",
        false,
        [
          turn({
            ttft_ms: 20,
            wall_time_ms: 200,
            prompt_tokens: 200,
            completion_tokens: 40,
            total_tokens: 240,
            tool_calls: [tool(false), tool(true)],
            tool_count: 2,
          }),
        ],
        0.002,
      ),
      run(
        "c",
        "multi_turn",
        true,
        [
          turn({
            ttft_ms: 30,
            wall_time_ms: 300,
            prompt_tokens: 100,
            cached_tokens: 50,
            total_tokens: 100,
          }),
          turn({
            ttft_ms: 40,
            wall_time_ms: 400,
            prompt_tokens: 100,
            cached_tokens: 0,
            total_tokens: 100,
            tool_calls: [tool(null)],
            tool_count: 1,
          }),
        ],
        0.003,
      ),
    ];
    const summary = summarizeCell({ id: "cell", label: "the cell" }, runs);
    expect(summary).toMatchObject({
      cell: "cell",
      label: "the cell",
      runs: 3,
      successes: 2,
      ttft_p50_ms: 25,
      wall_p50_ms: 250,
      tokens_per_turn: 140, // 560 / 4 turns
      cached_share: 0.2, // 100 / 500
      fallback_rate: 0.25, // 1 fallback / 4 tool executions
      tool_error_rate: 1 / 3, // 1 failed / 3 calls with a reply
      by_category: { simple: { runs: 2, successes: 1 }, multi_turn: { runs: 1, successes: 1 } },
    });
    expect(summary.success_rate).toBeCloseTo(2 / 3);
    expect(summary.success_ci[0]).toBeCloseTo(0.2076596, 6);
    expect(summary.success_ci[1]).toBeCloseTo(0.938508, 6);
    expect(summary.ttft_p95_ms).toBeCloseTo(38.5);
    expect(summary.wall_p95_ms).toBeCloseTo(385);
    expect(summary.cost_usd).toBeCloseTo(0.006, 12);
    expect(summary.cost_source).toBe("estimated");
  });

  it("says unknown where nothing was measured or a price is missing", () => {
    const summary = summarizeCell({ id: "x", label: "x" }, [
      run("a", "irrelevance", true, [turn()], null),
      run("b", "irrelevance", true, [turn()], 0.5),
    ]);
    expect(summary).toMatchObject({
      runs: 2,
      successes: 2,
      success_rate: 1,
      ttft_p50_ms: null,
      ttft_p95_ms: null,
      wall_p50_ms: null,
      wall_p95_ms: null,
      tokens_per_turn: 0,
      cached_share: 0,
      fallback_rate: 0,
      tool_error_rate: 0,
      cost_usd: null,
      cost_source: "unknown",
    });
  });

  it("gives an empty cell zeros and a [0, 1] interval", () => {
    expect(summarizeCell({ id: "e", label: "empty" }, [])).toEqual({
      cell: "e",
      label: "empty",
      runs: 0,
      successes: 0,
      success_rate: 0,
      success_ci: [0, 1],
      ttft_p50_ms: null,
      ttft_p95_ms: null,
      wall_p50_ms: null,
      wall_p95_ms: null,
      tokens_per_turn: 0,
      cached_share: 0,
      fallback_rate: 0,
      tool_error_rate: 0,
      cost_usd: 0,
      cost_source: "estimated",
      by_category: {},
    });
  });
});
