import { describe, expect, it } from "vitest";
import type { AuditRecord, MessageRecord, TurnRecord, UsageCallRecord } from "./api-types.js";
import { buildTranscript, isErrorReply } from "./transcript.js";

const at = "2025-01-01T10:00:00.000Z";

function message(id: number, fields: Partial<MessageRecord>): MessageRecord {
  return {
    id,
    session_id: "s",
    turn_index: 1,
    role: "assistant",
    content: "",
    name: null,
    tool_call_id: null,
    tool_calls: [],
    created_at: at,
    ...fields,
  };
}

function audit(
  id: number,
  event: string,
  details: Record<string, unknown>,
  round_index = 1,
): AuditRecord {
  return { id, session_id: "s", turn_index: 1, round_index, event, details, created_at: at };
}

const turns: TurnRecord[] = [
  {
    turn_index: 1,
    user_message: "find x and file a ticket",
    started_at: at,
    completed_at: at,
    wall_time_ms: 400,
    status: "completed",
    runner: null,
  },
];

const messages: MessageRecord[] = [
  message(1, { role: "user", content: "find x and file a ticket" }),
  message(2, {
    content: "Looking.",
    tool_calls: [
      { id: "e1", name: "mock_search", arguments: { query: "x" }, raw_arguments: '{"query":"x"}' },
      { id: "e2", name: "mock_ticket", arguments: {}, raw_arguments: "{}" },
    ],
  }),
  // Replies in another order than the calls: they attach by tool_call_id.
  message(3, {
    role: "tool",
    tool_call_id: "e2",
    name: "mock_ticket",
    content: '{"error":"title is required"}',
  }),
  message(4, {
    role: "tool",
    tool_call_id: "e1",
    name: "mock_search",
    content: '{"results":["x"]}',
  }),
  message(5, { content: "Found x; the ticket failed." }),
];

const calls: UsageCallRecord[] = [
  {
    id: 1,
    turn_index: 1,
    round_index: 1,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cached_tokens: 0,
    ttft_ms: null,
    elapsed_ms: 30,
    mode: "dual_agent",
    agent: "event_kernel",
    call_kind: "tool_execution",
    event_id: "e1",
    event_name: "mock_search",
    used_fallback: true,
    tool_latency_ms: 30,
    metric_key: "tool:1:1:e1",
    created_at: at,
  },
];

const auditLog: AuditRecord[] = [
  audit(1, "event_detected", {
    event_id: "e1",
    event_name: "mock_search",
    raw_arguments: "{query: x",
  }),
  audit(2, "fallback_start", { event_id: "e1", event_name: "mock_search", reason: "not JSON" }),
  audit(3, "fallback_end", { event_id: "e1", ok: true, arguments: { query: "x" } }),
  audit(4, "tool_end", { event_id: "e1", ok: true, latency_ms: 30 }),
  audit(5, "tool_end", { event_id: "e2", ok: false, latency_ms: 0, error: "title is required" }),
];

describe("buildTranscript", () => {
  it("keeps an assistant's thinking and refusal beside its answer, never in it", () => {
    const [turn] = buildTranscript(
      [
        message(1, { role: "user", content: "q" }),
        message(2, { content: "x is 1.", reasoning: "The user wants x.", refusal: null }),
        message(3, { content: "", reasoning: null, refusal: "I can't help with that." }),
        // A record written before reasoning was stored has neither field.
        message(4, { content: "old" }),
      ],
      turns,
      [],
      [],
    );
    expect(turn?.rounds.map((round) => [round.text, round.reasoning, round.refusal])).toEqual([
      ["x is 1.", "The user wants x.", ""],
      ["", "", "I can't help with that."],
      ["old", "", ""],
    ]);
  });

  it("rebuilds turns of rounds with tool cards from the stored record", () => {
    const [turn, ...rest] = buildTranscript(messages, turns, calls, auditLog);
    expect(rest).toEqual([]);
    expect(turn?.user_message).toBe("find x and file a ticket");
    expect(turn?.status).toBe("completed");
    expect(
      turn?.rounds.map((round) => [round.round_index, round.text, round.tools.length]),
    ).toEqual([
      [1, "Looking.", 2],
      [2, "Found x; the ticket failed.", 0],
    ]);
    const [search, ticket] = turn?.rounds[0]?.tools ?? [];
    expect(search).toMatchObject({
      state: "ok",
      result: '{"results":["x"]}',
      latency_ms: 30,
      used_fallback: true,
      requested_raw_arguments: "{query: x",
      fallback: { state: "ok", reason: "not JSON" },
    });
    expect(ticket).toMatchObject({ state: "error", used_fallback: false, fallback: null });
  });

  it("carries each call's approval decision from the audit onto its stored card", () => {
    const decided = [
      ...auditLog,
      audit(6, "approval_decided", {
        event_id: "e2",
        event_name: "mock_ticket",
        decision: "deny",
        decided_by: "user",
        reason: "not now",
        wait_ms: 900,
      }),
    ];
    const [search, ticket] =
      buildTranscript(messages, turns, calls, decided)[0]?.rounds[0]?.tools ?? [];
    expect(search?.approval).toBeNull();
    expect(ticket?.approval).toEqual({
      state: "denied",
      decided_by: "user",
      reason: "not now",
      wait_ms: 900,
    });
  });

  it("marks a call that never got its reply as an error once the turn is over", () => {
    const [turn] = buildTranscript(
      messages.slice(0, 2),
      [{ ...turns[0], status: "cancelled" } as TurnRecord],
      [],
      [],
    );
    expect(turn?.rounds[0]?.tools.map((card) => card.state)).toEqual(["error", "error"]);
  });

  it("attaches a failed turn's error from the audit log", () => {
    const failed = audit(9, "turn_failed", { code: "provider_error", message: "HTTP 500" });
    const [turn] = buildTranscript(messages.slice(0, 1), turns, [], [failed]);
    expect(turn?.error).toEqual({ code: "provider_error", message: "HTTP 500" });
  });
});

describe("isErrorReply", () => {
  it("recognises the kernel's error objects only", () => {
    expect(isErrorReply('{"error":"x"}')).toBe(true);
    expect(isErrorReply('{"results":[]}')).toBe(false);
    expect(isErrorReply("plain text")).toBe(false);
    expect(isErrorReply("[]")).toBe(false);
  });
});
