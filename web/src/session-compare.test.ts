import { describe, expect, it } from "vitest";
import { emptyUsageRollup } from "../../src/domain/usage.js";
import type { TurnRecord, TurnUsageRollup, UsageRollup, UsageSummary } from "./api-types.js";
import { sessionMetrics } from "./metrics.js";
import {
  type CompareInput,
  compareSessions,
  differenceSpread,
  judged,
  sessionOutcomes,
  TIMING_FLOOR_MS,
} from "./session-compare.js";
import type { ToolCardData, TranscriptTurn } from "./transcript.js";

const ZERO: UsageRollup = emptyUsageRollup();

function card(state: ToolCardData["state"], fallback: "ok" | "failed" | null = null): ToolCardData {
  return {
    id: `c${Math.random()}`,
    name: "mock_search",
    arguments: null,
    raw_arguments: "{}",
    requested_raw_arguments: null,
    state,
    result: null,
    latency_ms: null,
    used_fallback: fallback !== null,
    fallback: fallback === null ? null : { state: fallback, reason: null, error: null },
  };
}

function turn(
  turn_index: number,
  status: TranscriptTurn["status"],
  tools: ToolCardData[],
): TranscriptTurn {
  return {
    turn_index,
    user_message: `question ${turn_index}`,
    rounds: [{ round_index: 1, text: "", reasoning: "", refusal: "", tools, finish_reason: null }],
    status,
    wall_time_ms: null,
    error: null,
    notices: [],
  };
}

/** A session of turns with these wall times and tokens, in a mode. */
function side(
  mode: string,
  transcript: TranscriptTurn[],
  wall: number[],
  tokens: number[],
): CompareInput {
  const turns: TurnRecord[] = transcript.map((item, index) => ({
    turn_index: item.turn_index ?? index + 1,
    user_message: item.user_message,
    started_at: "2025-01-01T10:00:00.000Z",
    completed_at: "2025-01-01T10:00:01.000Z",
    wall_time_ms: wall[index] ?? null,
    status: item.status,
    runner: null,
  }));
  const rollups: TurnUsageRollup[] = turns.map((record, index) => ({
    ...ZERO,
    turn_index: record.turn_index,
    total_tokens: tokens[index] ?? 0,
    turn_wall_time_ms: wall[index] ?? null,
  }));
  const usage: UsageSummary = {
    calls: [],
    turns: rollups,
    session: {
      ...ZERO,
      total_tokens: tokens.reduce((sum, value) => sum + value, 0),
      turn_wall_time_ms: wall.reduce((sum, value) => sum + value, 0),
    },
  };
  return { mode, usage, turns, transcript, metrics: sessionMetrics(usage, turns) };
}

const row = (rows: ReturnType<typeof compareSessions>, key: string) =>
  rows.find((item) => item.key === key);

describe("sessionOutcomes", () => {
  it("counts completed turns, the others, tool errors and repairs", () => {
    expect(
      sessionOutcomes([
        turn(1, "completed", [card("ok"), card("error")]),
        turn(2, "completed", [card("error", "failed")]),
        turn(3, "failed", [card("ok", "ok")]),
        turn(4, "running", [card("error")]),
      ]),
    ).toEqual({
      turns_completed: 2,
      turns_not_completed: 1,
      turns_all_tools_failed: 1,
      tool_errors: 2,
      fallbacks_ok: 1,
      fallbacks_failed: 1,
    });
  });
});

describe("differenceSpread", () => {
  it("is null without two samples a side", () => {
    expect(differenceSpread([1], [1, 2], "sum", false)).toBeNull();
  });

  it("is twice the standard error of the difference of sums or of means", () => {
    // Variance 1 on each side, 4 samples each.
    const a = [1, 2, 3, 2];
    const b = [5, 6, 7, 6];
    const varianceOf = 2 / 3;
    expect(differenceSpread(a, b, "sum", false)).toBeCloseTo(2 * Math.sqrt(8 * varianceOf));
    expect(differenceSpread(a, b, "mean", false)).toBeCloseTo(2 * Math.sqrt(varianceOf / 2));
  });

  it("compares paired samples turn by turn: a constant shift has no spread", () => {
    expect(differenceSpread([10, 500, 90], [20, 510, 100], "sum", true)).toBe(0);
  });
});

describe("judged", () => {
  const base = {
    key: "mean_ttft_ms",
    label: "TTFT",
    unit: "ms" as const,
    direction: "lower" as const,
  };

  it("does not colour timings both under the floor, and says why", () => {
    expect(judged({ ...base, a: 1, b: TIMING_FLOOR_MS - 1 }, null)).toMatchObject({
      verdict: "noise",
      note: `both under ${TIMING_FLOOR_MS} ms`,
    });
  });

  it("does not colour a share moving less than a percentage point", () => {
    const share = {
      key: "cached_share",
      label: "Cached",
      unit: "ratio" as const,
      direction: "higher" as const,
    };
    expect(judged({ ...share, a: 0.688, b: 0.689 }, null)).toMatchObject({
      verdict: "noise",
      note: "under 1 percentage point",
    });
    expect(judged({ ...share, a: 0.4, b: 0.6 }, null).verdict).toBe("better");
  });

  it("does not colour a difference within the spread, and colours one beyond it", () => {
    expect(judged({ ...base, a: 100, b: 130 }, 40)).toMatchObject({
      verdict: "noise",
      note: "within the spread (±40 ms)",
    });
    expect(judged({ ...base, a: 100, b: 150 }, 40)).toMatchObject({ verdict: "worse", note: null });
    // Without a spread (one sample a side) a timing is not judged at all; tokens still are.
    expect(judged({ ...base, a: 100, b: 30 }, null)).toMatchObject({
      verdict: "noise",
      note: "too few samples to tell from noise",
    });
    expect(
      judged({ ...base, unit: "count", direction: "lower", a: 100, b: 30 }, null),
    ).toMatchObject({ verdict: "better", note: null });
  });
});

describe("compareSessions", () => {
  it("puts outcomes first: fewer tokens do not make a session whose tools all failed better", () => {
    const a = side("chat_agent_tools", [turn(1, "completed", [card("ok")])], [300], [500]);
    const b = side("chat_agent_tools", [turn(1, "completed", [card("error")])], [300], [200]);
    const rows = compareSessions(a, b);
    expect(rows.slice(0, 4).map((item) => item.key)).toEqual([
      "turns_completed",
      "turns_not_completed",
      "turns_all_tools_failed",
      "tool_errors",
    ]);
    expect(row(rows, "turns_all_tools_failed")).toMatchObject({ a: 0, b: 1, verdict: "worse" });
    expect(row(rows, "tool_errors")).toMatchObject({ a: 0, b: 1, verdict: "worse" });
  });

  it("colours no metric against a session without turns: its zeros are not an improvement", () => {
    const a = side("dual_agent", [turn(1, "completed", [card("ok")])], [500], [1418]);
    const b = side("dual_agent", [], [], []);
    const rows = compareSessions(a, b);
    expect(row(rows, "total_tokens")).toMatchObject({
      a: 1418,
      b: 0,
      verdict: "unknown",
      note: "session B has no turns: nothing to compare",
    });
    expect(rows.filter((item) => item.verdict === "better")).toEqual([]);
    // The outcome rows still say what happened: A completed a turn, B none.
    expect(row(rows, "turns_completed")).toMatchObject({ a: 1, b: 0, verdict: "worse" });
  });

  it("marks repair rows as not applicable when a side runs chat_agent_tools, uncoloured", () => {
    const a = side("dual_agent", [turn(1, "completed", [card("ok", "ok")])], [300], [500]);
    const b = side("chat_agent_tools", [turn(1, "completed", [card("ok")])], [300], [500]);
    const rows = compareSessions(a, b);
    for (const key of ["fallbacks", "fallbacks_ok", "fallbacks_failed"]) {
      expect(row(rows, key)).toMatchObject({
        b: null,
        delta: null,
        verdict: "not_applicable",
        note: "chat_agent_tools has no event agent, so no argument repairs",
      });
    }
    expect(row(rows, "fallbacks_ok")?.a).toBe(1);
    // Between two dual_agent sessions the repairs compare.
    const both = compareSessions(a, { ...a, transcript: [turn(1, "completed", [card("ok")])] });
    expect(row(both, "fallbacks_ok")).toMatchObject({ a: 1, b: 0, verdict: "neutral" });
  });

  it("colours wall time only beyond the spread of the turns", () => {
    const turnsOf = (n: number) =>
      Array.from({ length: n }, (_, index) => turn(index + 1, "completed", []));
    // Different questions, noisy turns: a 10% difference is within the spread.
    const a = side("dual_agent", turnsOf(4), [100, 300, 200, 400], [10, 10, 10, 10]);
    const b = side("dual_agent", turnsOf(4), [110, 330, 220, 440], [10, 10, 10, 10]);
    const unpaired = {
      ...b,
      turns: b.turns.map((t) => ({ ...t, user_message: `other ${t.turn_index}` })),
    };
    expect(row(compareSessions(a, unpaired), "wall_time_ms")).toMatchObject({ verdict: "noise" });
    // The same questions (a replay): each turn is slower, which is beyond the paired spread.
    expect(row(compareSessions(a, b), "wall_time_ms")?.verdict).toBe("worse");
  });
});
