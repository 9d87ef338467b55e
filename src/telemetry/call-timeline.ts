import type { AuditRecord } from "../domain/records.js";
import type { AgentRole, CallKind, UsageCallRecord } from "../domain/usage.js";

/** A model call as the audit log saw it start, and how it ended. */
interface Attempt {
  metric_key: string;
  agent: AgentRole;
  call_kind: CallKind;
  round_index: number;
  event_id: string | null;
  event_name: string | null;
  /** The model the request went to (`provider:model`, from its `*_request` audit row). */
  model: string | null;
  /** error.type: the provider error's code, or a tool failure's kind. */
  error_type: string | null;
}

/** One call of a turn, placed in time, with how it went. */
export interface PlacedCall extends Attempt {
  start_ms: number;
  end_ms: number;
  /** Its usage row; null for a model call that failed before any output (none is written). */
  record: UsageCallRecord | null;
}

/**
 * Where each call of a turn sat in time, from what the store keeps: the turn's start, each call's
 * measured duration (`elapsed_ms`), and each round's commit time (its rows' `created_at`; a round
 * is written once, when it ends). A round starts when the one before it was committed; its chat
 * call starts with it; an argument fallback starts when that call ends, and a tool when its
 * arguments were ready (the chat call's end, or its fallback's). The store keeps durations, not
 * each call's start, so a dual_agent tool dispatched mid-stream is drawn after the stream.
 */
export function placeCalls(input: {
  turn_index: number;
  start_ms: number;
  calls: readonly UsageCallRecord[];
  audit: readonly AuditRecord[];
}): PlacedCall[] {
  const { turn_index, start_ms } = input;
  const commits = new Map<number, number>();
  const commit = (round: number | null, at: string) => {
    if (round === null) return;
    const time = Date.parse(at);
    commits.set(round, Math.max(commits.get(round) ?? time, time));
  };
  for (const call of input.calls) commit(call.round_index, call.created_at);
  for (const row of input.audit) commit(row.round_index, row.created_at);
  const rounds = [...commits.keys()].sort((a, b) => a - b);
  const roundStart = new Map<number, number>();
  let previous = start_ms;
  for (const round of rounds) {
    roundStart.set(round, previous);
    previous = Math.max(previous, commits.get(round) ?? previous);
  }

  const attempts = modelAttempts(turn_index, input.audit);
  const toolErrors = toolFailures(input.audit);
  const byKey = new Map<string, UsageCallRecord>();
  for (const call of input.calls)
    byKey.set(call.metric_key ?? `${call.call_kind}:${call.id}`, call);
  const keys = new Set<string>([...byKey.keys(), ...attempts.keys()]);

  const entries = [...keys].map((metric_key) => {
    const record = byKey.get(metric_key) ?? null;
    const attempt = attempts.get(metric_key);
    const call_kind = record?.call_kind ?? attempt?.call_kind ?? "chat_completion";
    const event_id = record?.event_id ?? attempt?.event_id ?? null;
    return {
      metric_key,
      agent: record?.agent ?? attempt?.agent ?? "chat_agent",
      call_kind,
      round_index: record?.round_index ?? attempt?.round_index ?? 1,
      event_id,
      event_name: record?.event_name ?? attempt?.event_name ?? null,
      record,
      model: attempt?.model ?? null,
      error_type:
        call_kind === "tool_execution"
          ? (toolErrors.get(event_id ?? "") ?? null)
          : (attempt?.error_type ?? null),
    };
  });
  const order: Record<CallKind, number> = {
    chat_completion: 0,
    argument_fallback: 1,
    tool_execution: 2,
  };
  entries.sort((a, b) => a.round_index - b.round_index || order[a.call_kind] - order[b.call_kind]);

  const chatEnds = new Map<number, number>();
  const fallbackEnds = new Map<string, number>();
  return entries.map((entry) => {
    const roundBegins = roundStart.get(entry.round_index) ?? start_ms;
    const elapsed = entry.record?.elapsed_ms ?? null;
    let begins: number;
    let ends: number;
    if (entry.call_kind === "chat_completion") {
      begins = roundBegins;
      // A call that failed before any output lasted until its round was written.
      ends = begins + (elapsed ?? (commits.get(entry.round_index) ?? begins) - begins);
      chatEnds.set(entry.round_index, ends);
    } else {
      const askedAt = chatEnds.get(entry.round_index) ?? roundBegins;
      begins =
        entry.call_kind === "tool_execution"
          ? (fallbackEnds.get(`${entry.round_index}:${entry.event_id}`) ?? askedAt)
          : askedAt;
      ends = begins + (elapsed ?? 0);
      if (entry.call_kind === "argument_fallback") {
        fallbackEnds.set(`${entry.round_index}:${entry.event_id}`, ends);
      }
    }
    return { ...entry, start_ms: begins, end_ms: Math.max(begins, ends) };
  });
}

/**
 * The model calls the audit log saw start (`chat_agent_request`, `event_agent_request`), by the
 * metric key their usage row has or would have had, with the error that ended each (the
 * `*_error` row that follows its request).
 */
function modelAttempts(turn_index: number, audit: readonly AuditRecord[]): Map<string, Attempt> {
  const attempts = new Map<string, Attempt>();
  const open = new Map<string, Attempt>();
  for (const row of audit) {
    const round_index = row.round_index ?? 1;
    const details = row.details;
    if (row.event === "chat_agent_request" || row.event === "event_agent_request") {
      const chat = row.event === "chat_agent_request";
      const event_id = typeof details.event_id === "string" ? details.event_id : null;
      const attempt: Attempt = {
        metric_key: chat
          ? `chat:${turn_index}:${round_index}`
          : `fallback:${turn_index}:${round_index}:${event_id ?? ""}`,
        agent: chat ? "chat_agent" : "event_agent",
        call_kind: chat ? "chat_completion" : "argument_fallback",
        round_index,
        event_id,
        event_name: typeof details.event_name === "string" ? details.event_name : null,
        model: typeof details.model === "string" ? details.model : null,
        error_type: null,
      };
      attempts.set(attempt.metric_key, attempt);
      open.set(attempt.agent, attempt);
    } else if (row.event === "chat_agent_error" || row.event === "event_agent_error") {
      const attempt = open.get(row.event === "chat_agent_error" ? "chat_agent" : "event_agent");
      if (attempt) attempt.error_type = typeof details.code === "string" ? details.code : "error";
    }
  }
  return attempts;
}

/** Each failed tool call's kind of failure (its `tool_end` row), by event id. */
function toolFailures(audit: readonly AuditRecord[]): Map<string, string> {
  const failures = new Map<string, string>();
  for (const row of audit) {
    if (row.event !== "tool_end" || row.details.ok !== false) continue;
    const id = row.details.event_id;
    if (typeof id !== "string") continue;
    const kind = row.details.error_kind;
    failures.set(id, typeof kind === "string" ? kind : "tool_error");
  }
  return failures;
}
