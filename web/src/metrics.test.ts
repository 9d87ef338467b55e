import { describe, expect, it } from "vitest";
import type { UsageCallRecord, UsageSummary } from "./api-types.js";
import {
  compareMetrics,
  delta,
  estimatedLabel,
  lastTurnWithCallsRead,
  niceTicks,
  type SessionMetrics,
  servedModel,
  sessionMetrics,
  turnTimings,
  waterfallLayout,
} from "./metrics.js";

const T0 = Date.parse("2025-01-01T10:00:00.000Z");

function call(overrides: Partial<UsageCallRecord> & { end: number }): UsageCallRecord {
  const { end, ...rest } = overrides;
  return {
    id: 1,
    turn_index: 1,
    round_index: 1,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cached_tokens: 0,
    ttft_ms: null,
    elapsed_ms: 0,
    mode: "dual_agent",
    agent: "chat_agent",
    call_kind: "chat_completion",
    event_id: null,
    event_name: null,
    used_fallback: false,
    tool_latency_ms: null,
    metric_key: null,
    created_at: new Date(T0 + end).toISOString(),
    ...rest,
  };
}

// Turn 1: round 1 chat 0–400 ms (TTFT 120); the tool is dispatched early at 300 ms after a
// fallback 250–300 ms; round 2 chat 520–800 ms (TTFT 90).
const calls: UsageCallRecord[] = [
  call({
    id: 1,
    end: 400,
    elapsed_ms: 400,
    ttft_ms: 120,
    total_tokens: 50,
    metric_key: "chat:1:1",
  }),
  call({
    id: 2,
    end: 300,
    elapsed_ms: 50,
    ttft_ms: 20,
    agent: "event_agent",
    call_kind: "argument_fallback",
    event_id: "e1",
    event_name: "mock_search",
    metric_key: "fallback:1:1:e1",
  }),
  call({
    id: 3,
    end: 500,
    elapsed_ms: 200,
    agent: "event_kernel",
    call_kind: "tool_execution",
    event_id: "e1",
    event_name: "mock_search",
    used_fallback: true,
    tool_latency_ms: 200,
    metric_key: "tool:1:1:e1",
  }),
  call({ id: 4, round_index: 2, end: 800, elapsed_ms: 280, ttft_ms: 90, metric_key: "chat:1:2" }),
  call({ id: 5, turn_index: 2, end: 5000, elapsed_ms: 300, ttft_ms: 150, metric_key: "chat:2:1" }),
];

describe("waterfallLayout", () => {
  it("places every call of the turn on one axis that starts at the first call", () => {
    const layout = waterfallLayout(calls, 1);
    expect(layout.total_ms).toBe(800);
    expect(layout.rows.map((row) => [row.key, row.label, row.start_ms, row.duration_ms])).toEqual([
      ["chat:1:1", "R1 chat", 0, 400],
      ["fallback:1:1:e1", "R1 fallback mock_search", 250, 50],
      ["tool:1:1:e1", "R1 tool mock_search", 300, 200],
      ["chat:1:2", "R2 chat", 520, 280],
    ]);
    expect(layout.rows[2]?.used_fallback).toBe(true);
  });

  it("is empty for a turn without calls", () => {
    expect(waterfallLayout(calls, 9)).toEqual({ rows: [], total_ms: 0 });
  });
});

const usage: UsageSummary = {
  calls,
  turns: [
    {
      turn_index: 1,
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      cached_tokens: 40,
      elapsed_ms: 930,
      call_count: 4,
      fallback_count: 1,
      tool_count: 1,
      turn_wall_time_ms: 810,
    },
    {
      turn_index: 2,
      prompt_tokens: 60,
      completion_tokens: 10,
      total_tokens: 70,
      cached_tokens: 40,
      elapsed_ms: 300,
      call_count: 1,
      fallback_count: 0,
      tool_count: 0,
      turn_wall_time_ms: 310,
    },
  ],
  session: {
    prompt_tokens: 160,
    completion_tokens: 30,
    total_tokens: 190,
    cached_tokens: 80,
    reasoning_tokens: 12,
    cache_write_tokens: 0,
    elapsed_ms: 1230,
    call_count: 5,
    fallback_count: 1,
    tool_count: 1,
    estimated_count: 0,
    cost_usd: 0.0042,
    reported_cost_count: 1,
    unpriced_count: 0,
    turn_wall_time_ms: 1120,
  },
};

describe("turnTimings and sessionMetrics", () => {
  it("takes TTFT from each turn's first chat completion", () => {
    expect(turnTimings(usage)).toEqual([
      { turn_index: 1, ttft_ms: 120, wall_time_ms: 810 },
      { turn_index: 2, ttft_ms: 150, wall_time_ms: 310 },
    ]);
  });

  it("sums a session", () => {
    expect(sessionMetrics(usage)).toEqual({
      total_tokens: 190,
      cached_share: 0.5,
      calls: 5,
      fallbacks: 1,
      tools: 1,
      elapsed_ms: 1230,
      wall_time_ms: 1120,
      mean_ttft_ms: 135,
      cost_usd: 0.0042,
    });
  });
});

describe("lastTurnWithCallsRead", () => {
  it("names the last turn the calls read reach, only when they were cut short", () => {
    const read = [{ turn_index: 1 }, { turn_index: 1 }, { turn_index: 2 }];
    expect(lastTurnWithCallsRead(read, true)).toBe(2);
    expect(lastTurnWithCallsRead(read, false)).toBeNull();
    // Cut before any call: every turn is unread.
    expect(lastTurnWithCallsRead([], true)).toBe(0);
  });
});

describe("delta and compareMetrics", () => {
  it("computes B − A, the change relative to A, and whether it is better", () => {
    expect(delta(200, 150, "lower")).toEqual({ delta: -50, percent: -0.25, verdict: "better" });
    expect(delta(200, 250, "lower")).toEqual({ delta: 50, percent: 0.25, verdict: "worse" });
    expect(delta(0.2, 0.5, "higher")).toMatchObject({ verdict: "better" });
    expect(delta(3, 5, "neutral")).toMatchObject({ delta: 2, verdict: "neutral" });
    expect(delta(7, 7, "lower")).toEqual({ delta: 0, percent: 0, verdict: "same" });
  });

  it("has no percentage from zero and no verdict without both values", () => {
    expect(delta(0, 10, "lower")).toEqual({ delta: 10, percent: null, verdict: "worse" });
    expect(delta(null, 10, "lower")).toEqual({ delta: null, percent: null, verdict: "unknown" });
  });

  it("compares no cost when one side has unpriced calls: a partial sum is not a cost", () => {
    const priced = sessionMetrics(usage);
    const partly = sessionMetrics({ ...usage, session: { ...usage.session, unpriced_count: 1 } });
    expect(partly.cost_usd).toBeNull();
    const row = compareMetrics(priced, partly).find((metric) => metric.key === "cost_usd");
    expect(row).toMatchObject({ a: 0.0042, b: null, verdict: "unknown" });
  });

  it("compares every headline metric", () => {
    const a: SessionMetrics = sessionMetrics(usage);
    const b: SessionMetrics = { ...a, total_tokens: 95, cached_share: 0.25, mean_ttft_ms: null };
    const rows = compareMetrics(a, b);
    expect(rows.map((row) => row.key)).toEqual([
      "total_tokens",
      "cached_share",
      "calls",
      "fallbacks",
      "tools",
      "elapsed_ms",
      "wall_time_ms",
      "mean_ttft_ms",
      "cost_usd",
    ]);
    expect(rows.find((row) => row.key === "total_tokens")).toMatchObject({
      delta: -95,
      percent: -0.5,
      verdict: "better",
    });
    expect(rows.find((row) => row.key === "cached_share")?.verdict).toBe("worse");
    expect(rows.find((row) => row.key === "mean_ttft_ms")?.verdict).toBe("unknown");
  });
});

describe("niceTicks", () => {
  it("uses 1, 2 or 5 × 10^n steps reaching the maximum", () => {
    expect(niceTicks(800, 5)).toEqual([0, 200, 400, 600, 800]);
    expect(niceTicks(830, 5)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(niceTicks(0.9, 3)).toEqual([0, 0.5, 1]);
    expect(niceTicks(2, 5, 1)).toEqual([0, 1, 2]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });
});

describe("estimatedLabel", () => {
  it("labels a figure that includes estimated calls, and only such a figure", () => {
    expect(estimatedLabel({ estimated_count: 0 })).toBeNull();
    expect(estimatedLabel(null)).toBeNull();
    expect(estimatedLabel({ estimated_count: 1 })).toEqual({
      text: "estimated",
      title: expect.stringMatching(/^1 call without the endpoint's usage/),
    });
    expect(estimatedLabel({ estimated_count: 3 })?.title).toMatch(/^3 calls /);
  });
});

describe("servedModel", () => {
  it("names the model that answered only when it is not the one asked for", () => {
    expect(servedModel({ response_model: null }, "openai:gpt-x")).toBeNull();
    expect(servedModel({ response_model: "gpt-x" }, "openai:gpt-x")).toBeNull();
    expect(servedModel({ response_model: "sim" }, "sim")).toBeNull();
    expect(servedModel({ response_model: "gpt-x-2025-01-01" }, "openai:gpt-x")).toBe(
      "gpt-x-2025-01-01",
    );
    expect(servedModel({ response_model: "anthropic/claude" }, "openrouter:auto")).toBe(
      "anthropic/claude",
    );
    expect(servedModel({ response_model: "m" }, null)).toBe("m");
  });
});
