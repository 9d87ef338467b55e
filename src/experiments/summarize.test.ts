import { describe, expect, it } from "vitest";
import type { RunResult, ScenarioCategory, TurnFacts } from "../domain/experiment.js";
import { costOf, DEFAULT_PRICES, priceFor } from "./prices.js";
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

describe("priceFor", () => {
  it("finds exact names, names behind a provider, and dated snapshots", () => {
    expect(priceFor("gpt-4.1-mini", {})).toEqual(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("openai:gpt-4.1-mini", {})).toEqual(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("openai:gpt-4.1-mini-2025-04-14", {})).toEqual(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("openai:gpt-4.1-2025-04-14", {})).toEqual(DEFAULT_PRICES["gpt-4.1"]);
    expect(priceFor("openai:gpt-4o-mini", {})).toEqual(DEFAULT_PRICES["gpt-4o-mini"]);
    expect(priceFor("openai:o3-mini", {})).toEqual(DEFAULT_PRICES["o3-mini"]);
  });

  it("prices every simulated model at zero", () => {
    const free = { input: 0, cached_input: 0, output: 0 };
    expect(priceFor("sim", {})).toEqual(free);
    expect(priceFor("sim:fast", {})).toEqual(free);
  });

  it("is null for unknown models, and never matches a mere prefix", () => {
    expect(priceFor("openai:llama3.1", {})).toBeNull();
    expect(priceFor("openai:gpt-4.10", {})).toBeNull();
    expect(priceFor("simulator", {})).toBeNull();
    // Another model of the same family is not priced as its cheaper namesake.
    expect(priceFor("openai:o3-pro", {})).toBeNull();
    expect(priceFor("openai:gpt-5-pro", {})).toBeNull();
    expect(priceFor("openai:gpt-4.1-mini-high", {})).toBeNull();
    expect(priceFor("openai:gpt-4o-2024-08-06", {})).toEqual(DEFAULT_PRICES["gpt-4o"]);
    expect(priceFor("openai:gpt-4-0613", { "gpt-4": { input: 30, output: 60 } })).toEqual({
      input: 30,
      output: 60,
    });
  });

  it("lets a suite's prices extend and override the table", () => {
    const local = { input: 0, output: 0 };
    const cheaper = { input: 0.1, output: 0.2 };
    const extra = { "openai:llama3.1": local, "gpt-4.1-mini": cheaper };
    expect(priceFor("openai:llama3.1", extra)).toEqual(local);
    // A longer name is another model unless it is a dated snapshot.
    expect(priceFor("openai:llama3.1-8b", extra)).toBeNull();
    expect(priceFor("openai:gpt-4.1-mini", extra)).toEqual(cheaper);
    expect(priceFor("gpt-4.1", extra)).toEqual(DEFAULT_PRICES["gpt-4.1"]);
  });
});

describe("costOf", () => {
  const turns = [
    turn({ prompt_tokens: 1_000_000, cached_tokens: 400_000, completion_tokens: 100_000 }),
    turn({ prompt_tokens: 500_000, cached_tokens: 0, completion_tokens: 50_000 }),
  ];

  it("prices uncached, cached and completion tokens per million", () => {
    // (1.1M uncached × 0.4) + (0.4M cached × 0.1) + (0.15M completion × 1.6)
    expect(costOf(turns, { input: 0.4, cached_input: 0.1, output: 1.6 })).toBeCloseTo(
      0.44 + 0.04 + 0.24,
      12,
    );
  });

  it("charges cached tokens as input when the price has no cached rate", () => {
    expect(costOf(turns, { input: 1, output: 2 })).toBeCloseTo(1.5 + 0.3, 12);
  });

  it("is zero for free models and null for unknown prices", () => {
    expect(costOf(turns, priceFor("sim", {}))).toBe(0);
    expect(costOf(turns, null)).toBeNull();
    expect(costOf([], { input: 1, output: 1 })).toBe(0);
  });
});
