import { describe, expect, it } from "vitest";
import type { TurnEvent } from "./api-types.js";
import { applyTurnEvent, livePhase, liveTtft, startLiveTurn } from "./live-turn.js";

const usage = {
  turn_index: 3,
  prompt_tokens: 10,
  completion_tokens: 5,
  total_tokens: 15,
  cached_tokens: 0,
  elapsed_ms: 100,
  call_count: 2,
  fallback_count: 1,
  tool_count: 1,
  turn_wall_time_ms: 90,
};

const events: TurnEvent[] = [
  { type: "turn_start", session_id: "s", turn_index: 3, mode: "dual_agent", simulated: true },
  { type: "round_start", round_index: 1 },
  { type: "text_delta", round_index: 1, text: "Let me " },
  { type: "text_delta", round_index: 1, text: "search." },
  {
    type: "tool_call",
    round_index: 1,
    event: { id: "e1", name: "mock_search", arguments: {}, raw_arguments: "{query:" },
  },
  {
    type: "fallback_start",
    round_index: 1,
    event_id: "e1",
    event_name: "mock_search",
    reason: "not JSON",
  },
  {
    type: "fallback_end",
    round_index: 1,
    event_id: "e1",
    ok: true,
    event: {
      id: "e1",
      name: "mock_search",
      arguments: { query: "x" },
      raw_arguments: '{"query":"x"}',
    },
    error: null,
  },
  {
    type: "tool_result",
    round_index: 1,
    event_id: "e1",
    event_name: "mock_search",
    ok: true,
    content: '{"results":[]}',
    latency_ms: 12,
    used_fallback: true,
  },
  {
    type: "usage",
    round_index: 1,
    agent: "chat_agent",
    call_kind: "chat_completion",
    metric_key: "chat:3:1",
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 0 },
    estimated: false,
    ttft_ms: 42,
    elapsed_ms: 80,
  },
  { type: "round_end", round_index: 1, finish_reason: "stop", tool_calls: 1 },
  { type: "round_start", round_index: 2 },
  { type: "text_delta", round_index: 2, text: "Nothing found." },
  { type: "round_end", round_index: 2, finish_reason: "stop", tool_calls: 0 },
  {
    type: "turn_end",
    session_id: "s",
    turn_index: 3,
    status: "completed",
    answer: "Nothing found.",
    wall_time_ms: 95,
    usage,
  },
];

describe("applyTurnEvent", () => {
  it("folds a turn's events into rounds, streamed text and tool cards", () => {
    const live = events.reduce(applyTurnEvent, startLiveTurn("find x"));
    expect(live.finished).toBe(true);
    expect(live.simulated).toBe(true);
    expect(live.turn).toMatchObject({
      turn_index: 3,
      status: "completed",
      wall_time_ms: 95,
      user_message: "find x",
    });
    expect(live.turn.rounds.map((round) => round.text)).toEqual([
      "Let me search.",
      "Nothing found.",
    ]);
    expect(live.turn.rounds[0]?.tools).toEqual([
      {
        id: "e1",
        name: "mock_search",
        arguments: { query: "x" },
        raw_arguments: '{"query":"x"}',
        requested_raw_arguments: "{query:",
        state: "ok",
        result: '{"results":[]}',
        latency_ms: 12,
        used_fallback: true,
        fallback: { state: "ok", reason: "not JSON", error: null },
      },
    ]);
    expect(liveTtft(live)).toBe(42);
    expect(live.usage).toEqual(usage);
  });

  it("reports the phase as the turn moves", () => {
    const states = [startLiveTurn("q")];
    for (const event of events)
      states.push(applyTurnEvent(states.at(-1) ?? startLiveTurn("q"), event));
    expect(states.map(livePhase)).toEqual([
      "starting", // sent
      "starting", // turn_start
      "waiting", // round_start
      "streaming",
      "streaming",
      "tools", // tool_call
      "repairing", // fallback_start
      "tools", // fallback_end: the tool runs now
      "streaming", // tool_result
      "streaming", // usage
      "streaming", // round_end
      "waiting", // round 2 starts
      "streaming",
      "streaming",
      "finished",
    ]);
  });

  it("keeps an error event", () => {
    const live = applyTurnEvent(startLiveTurn("q"), {
      type: "error",
      code: "provider_error",
      message: "boom",
    });
    expect(live.turn.error).toEqual({ code: "provider_error", message: "boom" });
  });
});

describe("a call waiting for approval", () => {
  const call: TurnEvent[] = [
    {
      type: "turn_start",
      session_id: "s",
      turn_index: 1,
      mode: "chat_agent_tools",
      simulated: true,
    },
    { type: "round_start", round_index: 1 },
    {
      type: "tool_call",
      round_index: 1,
      event: {
        id: "c1",
        name: "mock_ticket",
        arguments: { title: "x" },
        raw_arguments: '{"title":"x"}',
      },
    },
    {
      type: "approval_required",
      round_index: 1,
      event_id: "c1",
      event_name: "mock_ticket",
      arguments: { title: "x" },
      timeout_ms: 600_000,
    },
  ];
  const fold = (list: TurnEvent[]) => list.reduce(applyTurnEvent, startLiveTurn("file a ticket"));

  it("is pending with its arguments until decided, then runs with the edited ones", () => {
    const waiting = fold(call);
    const card = waiting.turn.rounds[0]?.tools[0];
    expect(card).toMatchObject({ state: "approval", approval: { state: "pending" } });
    expect(livePhase(waiting)).toBe("approval");
    const decided = fold([
      ...call,
      {
        type: "approval_decided",
        round_index: 1,
        event_id: "c1",
        event_name: "mock_ticket",
        decision: "approve",
        decided_by: "user",
        reason: null,
        arguments: { title: "y" },
        wait_ms: 1200,
      },
    ]);
    expect(decided.turn.rounds[0]?.tools[0]).toMatchObject({
      state: "running",
      arguments: { title: "y" },
      approval: { state: "approved", decided_by: "user", wait_ms: 1200 },
    });
    expect(livePhase(decided)).toBe("tools");
  });
});

describe("thinking and refusals", () => {
  it("streams reasoning apart from the answer, and a refusal apart from both", () => {
    const start = [
      { type: "turn_start", session_id: "s", turn_index: 1, mode: "dual_agent", simulated: true },
      { type: "round_start", round_index: 1 },
    ] satisfies TurnEvent[];
    const thinking = [
      ...start,
      { type: "reasoning_delta", round_index: 1, text: "The user wants " },
      { type: "reasoning_delta", round_index: 1, text: "x." },
    ] satisfies TurnEvent[];
    const live = thinking.reduce(applyTurnEvent, startLiveTurn("q"));
    expect(live.turn.rounds[0]).toMatchObject({ reasoning: "The user wants x.", text: "" });
    expect(livePhase(live)).toBe("thinking");

    const answered = applyTurnEvent(live, { type: "text_delta", round_index: 1, text: "x is 1." });
    expect(answered.turn.rounds[0]).toMatchObject({
      reasoning: "The user wants x.",
      text: "x is 1.",
    });
    expect(livePhase(answered)).toBe("streaming");

    const refused = [
      ...start,
      { type: "refusal_delta", round_index: 1, text: "I can't " },
      { type: "refusal_delta", round_index: 1, text: "help with that." },
    ] satisfies TurnEvent[];
    const refusal = refused.reduce(applyTurnEvent, startLiveTurn("q"));
    expect(refusal.turn.rounds[0]).toMatchObject({
      refusal: "I can't help with that.",
      text: "",
      reasoning: "",
    });
    expect(livePhase(refusal)).toBe("streaming");
  });

  it("keeps each call's cost and whether its usage is estimated", () => {
    const live = applyTurnEvent(startLiveTurn("q"), {
      type: "usage",
      round_index: 1,
      agent: "chat_agent",
      call_kind: "chat_completion",
      metric_key: "chat:1:1",
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        cached_tokens: 0,
        reasoning_tokens: 3,
        cache_write_tokens: 0,
      },
      estimated: true,
      usage_source: "estimated",
      cost_usd: 0.0001,
      cost_source: "estimated",
      response_model: null,
      ttft_ms: 40,
      elapsed_ms: 90,
    });
    expect(live.usage_events[0]).toMatchObject({
      total_tokens: 15,
      estimated: true,
      cost_usd: 0.0001,
      cost_source: "estimated",
    });
  });
});
