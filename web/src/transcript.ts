/**
 * The conversation as the chat view draws it: turns, rounds, and one card per tool call. Built two
 * ways that meet in one shape: from the stored record (messages + usage + audit, the truth) and
 * from a live turn's events (see live-turn.ts).
 */
import type { AuditRecord, MessageRecord, TurnRecord, UsageCallRecord } from "./api-types.js";

/** A stored turn's status ("running" for one still streaming). */
export type TurnState = TurnRecord["status"];

export type ToolState = "running" | "repairing" | "approval" | "ok" | "error";

/** A call that waited (or waits) for approval: the live turn's events, or the audit once stored. */
export interface ApprovalInfo {
  state: "pending" | "approved" | "denied";
  decided_by: "user" | "policy" | "timeout" | null;
  reason: string | null;
  wait_ms: number | null;
}

export interface FallbackInfo {
  state: "running" | "ok" | "failed";
  reason: string | null;
  error: string | null;
}

export interface ToolCardData {
  id: string;
  name: string;
  arguments: Record<string, unknown> | null;
  raw_arguments: string;
  /** What the chat agent first wrote, when the event agent replaced it. */
  requested_raw_arguments: string | null;
  state: ToolState;
  result: string | null;
  latency_ms: number | null;
  used_fallback: boolean;
  fallback: FallbackInfo | null;
  /** Null for a call that needed no approval. */
  approval?: ApprovalInfo | null;
}

export interface TranscriptRound {
  round_index: number;
  /** The answer only: thinking and a refusal are kept apart, never mixed into it. */
  text: string;
  /** The model's thinking ("" when none), shown collapsed. */
  reasoning: string;
  /** What the model said when it refused ("" when it did not). */
  refusal: string;
  tools: ToolCardData[];
  finish_reason: string | null;
}

export interface TranscriptTurn {
  turn_index: number | null;
  user_message: string;
  rounds: TranscriptRound[];
  status: TurnState;
  wall_time_ms: number | null;
  error: { code: string; message: string } | null;
  notices: string[];
}

const stringOf = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** A tool reply is an error when its JSON is an object with an `error` key (the kernel's form). */
export function isErrorReply(content: string): boolean {
  try {
    const value: unknown = JSON.parse(content);
    return value !== null && typeof value === "object" && !Array.isArray(value) && "error" in value;
  } catch {
    return false;
  }
}

interface ToolFacts {
  requested_raw: string | null;
  fallback: FallbackInfo | null;
  ok: boolean | null;
  latency_ms: number | null;
  used_fallback: boolean;
  approval: ApprovalInfo | null;
}

const factKey = (turn: number, round: number | null, id: string) => `${turn}:${round ?? "?"}:${id}`;

/** What usage rows and audit entries say about each tool call, by turn, round and event id. */
function collectToolFacts(calls: UsageCallRecord[], audit: AuditRecord[]): Map<string, ToolFacts> {
  const facts = new Map<string, ToolFacts>();
  const entry = (turn: number, round: number | null, id: string): ToolFacts => {
    const key = factKey(turn, round, id);
    let value = facts.get(key);
    if (!value) {
      value = {
        requested_raw: null,
        fallback: null,
        ok: null,
        latency_ms: null,
        used_fallback: false,
        approval: null,
      };
      facts.set(key, value);
    }
    return value;
  };
  for (const call of calls) {
    if (!call.event_id) continue;
    const value = entry(call.turn_index, call.round_index, call.event_id);
    if (call.call_kind === "tool_execution") {
      value.latency_ms = call.tool_latency_ms ?? call.elapsed_ms;
      value.used_fallback ||= call.used_fallback;
    } else if (call.call_kind === "argument_fallback") {
      value.used_fallback = true;
      value.fallback ??= { state: "ok", reason: null, error: null };
    }
  }
  for (const record of audit) {
    const id = stringOf(record.details.event_id);
    if (record.turn_index === null || !id) continue;
    const value = entry(record.turn_index, record.round_index, id);
    switch (record.event) {
      case "event_detected":
        value.requested_raw = stringOf(record.details.raw_arguments);
        break;
      case "fallback_start":
        value.used_fallback = true;
        value.fallback = {
          state: value.fallback?.state ?? "running",
          reason: stringOf(record.details.reason),
          error: value.fallback?.error ?? null,
        };
        break;
      case "fallback_end": {
        const ok = record.details.ok === true;
        value.fallback = {
          state: ok ? "ok" : "failed",
          reason: value.fallback?.reason ?? null,
          error: stringOf(record.details.error),
        };
        break;
      }
      case "approval_decided": {
        const decidedBy = stringOf(record.details.decided_by);
        value.approval = {
          state: record.details.decision === "approve" ? "approved" : "denied",
          decided_by:
            decidedBy === "user" || decidedBy === "policy" || decidedBy === "timeout"
              ? decidedBy
              : null,
          reason: stringOf(record.details.reason),
          wait_ms: typeof record.details.wait_ms === "number" ? record.details.wait_ms : null,
        };
        break;
      }
      case "tool_end":
        value.ok = record.details.ok === true;
        if (typeof record.details.latency_ms === "number") {
          value.latency_ms ??= record.details.latency_ms;
        }
        break;
      default:
        break;
    }
  }
  return facts;
}

/** The stored conversation as turns of rounds with tool cards; tool replies join their call. */
export function buildTranscript(
  messages: MessageRecord[],
  turns: TurnRecord[],
  calls: UsageCallRecord[],
  audit: AuditRecord[],
): TranscriptTurn[] {
  const facts = collectToolFacts(calls, audit);
  const byTurn = new Map<number, TranscriptTurn>();
  const turnOf = (turn_index: number): TranscriptTurn => {
    let turn = byTurn.get(turn_index);
    if (!turn) {
      turn = {
        turn_index,
        user_message: "",
        rounds: [],
        status: "completed",
        wall_time_ms: null,
        error: null,
        notices: [],
      };
      byTurn.set(turn_index, turn);
    }
    return turn;
  };
  for (const record of turns) {
    const turn = turnOf(record.turn_index);
    turn.user_message = record.user_message;
    turn.status = record.status;
    turn.wall_time_ms = record.wall_time_ms;
  }
  const cards = new Map<string, ToolCardData>();
  const sorted = [...messages].sort((left, right) => left.id - right.id);
  for (const message of sorted) {
    const turn = turnOf(message.turn_index);
    if (message.role === "user") {
      if (!turn.user_message) turn.user_message = message.content;
    } else if (message.role === "assistant") {
      const round_index = turn.rounds.length + 1;
      const tools = message.tool_calls.map((call): ToolCardData => {
        const known =
          facts.get(factKey(message.turn_index, round_index, call.id)) ??
          facts.get(factKey(message.turn_index, null, call.id));
        const card: ToolCardData = {
          id: call.id,
          name: call.name,
          arguments: call.arguments,
          raw_arguments: call.raw_arguments,
          requested_raw_arguments:
            known?.requested_raw !== undefined &&
            known.requested_raw !== null &&
            known.requested_raw !== call.raw_arguments
              ? known.requested_raw
              : null,
          state: "running",
          result: null,
          latency_ms: known?.latency_ms ?? null,
          used_fallback: known?.used_fallback ?? false,
          fallback: known?.fallback ?? null,
          approval: known?.approval ?? null,
        };
        cards.set(`${message.turn_index}:${call.id}`, card);
        return card;
      });
      turn.rounds.push({
        round_index,
        text: message.content,
        reasoning: message.reasoning ?? "",
        refusal: message.refusal ?? "",
        tools,
        finish_reason: null,
      });
    } else if (message.role === "tool" && message.tool_call_id) {
      const card = cards.get(`${message.turn_index}:${message.tool_call_id}`);
      if (!card) continue;
      const round = turn.rounds.find((item) => item.tools.includes(card));
      const known = facts.get(factKey(message.turn_index, round?.round_index ?? null, card.id));
      card.result = message.content;
      const ok = known?.ok ?? !isErrorReply(message.content);
      card.state = ok && !isErrorReply(message.content) ? "ok" : "error";
    }
  }
  for (const record of audit) {
    if (record.turn_index === null) continue;
    const turn = byTurn.get(record.turn_index);
    if (!turn) continue;
    if (record.event === "turn_failed") {
      turn.error = {
        code: stringOf(record.details.code) ?? "error",
        message: stringOf(record.details.message) ?? "the turn failed",
      };
    } else if (record.event === "provider_retry") {
      turn.notices.push(retryNotice(record.details));
    }
  }
  // A card whose reply never arrived belongs to a turn that did not finish it.
  for (const turn of byTurn.values()) {
    for (const round of turn.rounds) {
      for (const card of round.tools) {
        if (card.result === null && turn.status !== "running") card.state = "error";
      }
    }
  }
  return [...byTurn.values()].sort(
    (left, right) => (left.turn_index ?? 0) - (right.turn_index ?? 0),
  );
}

export function retryNotice(details: Record<string, unknown>): string {
  const agent = stringOf(details.agent) ?? "model";
  const attempt = typeof details.attempt === "number" ? ` (attempt ${details.attempt})` : "";
  const status = typeof details.status === "number" ? ` HTTP ${details.status}` : "";
  const reason = stringOf(details.reason);
  return `Retrying ${agent.replace("_", " ")}${attempt}${status}${reason ? `: ${reason}` : ""}`;
}
