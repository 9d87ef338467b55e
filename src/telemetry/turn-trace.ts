import type { AuditRecord, MessageRecord, TurnRecord } from "../domain/records.js";
import { modeOf, type ToolInvocationMode } from "../domain/session-config.js";
import type { UsageCallRecord } from "../domain/usage.js";
import type { SessionStore } from "../store/session-store.js";
import { type PlacedCall, placeCalls } from "./call-timeline.js";

/** A model as a span names it: `openai:gpt-4.1-mini` → provider `openai`, model `gpt-4.1-mini`. */
export interface ModelName {
  provider: string;
  model: string;
}

/** One turn as the store recorded it, with each call placed in time: what its spans say. */
export interface TurnTrace {
  session_id: string;
  mode: ToolInvocationMode;
  turn_index: number;
  status: TurnRecord["status"];
  start_ms: number;
  end_ms: number;
  chat_model: ModelName;
  event_model: ModelName;
  /** The code of the turn's failure (its `turn_failed` audit row), when it failed. */
  error_type: string | null;
  calls: PlacedCall[];
  /** This turn's messages in order (user, then each round's assistant and tool replies). */
  messages: MessageRecord[];
  /** What every chat call of the turn sent as its system message (its `turn_start` row). */
  system_prompt: string | null;
}

/** What the reader needs of a store: the session's rows, read once for all its turns. */
export interface SessionRows {
  session_id: string;
  config: Record<string, unknown>;
  turns: readonly TurnRecord[];
  calls: readonly UsageCallRecord[];
  audit: readonly AuditRecord[];
  messages: readonly MessageRecord[];
}

/**
 * Reads a session's rows. Messages only when `content` asks for them: contents leave the lab only
 * when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT says so.
 */
export async function readSessionRows(
  store: SessionStore,
  sessionId: string,
  options: { content: boolean },
): Promise<SessionRows | null> {
  const session = await store.getSession(sessionId);
  if (session === null) return null;
  const [turns, summary, audit, messages] = await Promise.all([
    store.listTurns(sessionId),
    store.usageSummary(sessionId),
    store.listAuditLogs(sessionId),
    options.content ? store.listMessages(sessionId) : [],
  ]);
  return {
    session_id: sessionId,
    config: session.config,
    turns,
    calls: summary.calls,
    audit,
    messages,
  };
}

/** The traces of the session's turns (all of them, or only `turn_index`). */
export function turnTraces(rows: SessionRows, turn_index?: number): TurnTrace[] {
  const turns =
    turn_index === undefined
      ? rows.turns
      : rows.turns.filter((turn) => turn.turn_index === turn_index);
  return turns.map((turn) => turnTrace(rows, turn));
}

function turnTrace(rows: SessionRows, turn: TurnRecord): TurnTrace {
  const { turn_index } = turn;
  const start_ms = Date.parse(turn.started_at);
  const end_ms =
    turn.completed_at !== null
      ? Date.parse(turn.completed_at)
      : start_ms + (turn.wall_time_ms ?? 0);
  const audit = rows.audit.filter((row) => row.turn_index === turn_index);
  const failure = audit.findLast((row) => row.event === "turn_failed");
  const started = audit.find((row) => row.event === "turn_start");
  return {
    session_id: rows.session_id,
    mode: modeOf(rows.config),
    turn_index,
    status: turn.status,
    start_ms,
    end_ms: Math.max(start_ms, end_ms),
    chat_model: modelName(started?.details.chat_model ?? agentModel(rows.config, "chat_agent")),
    event_model: modelName(started?.details.event_model ?? agentModel(rows.config, "event_agent")),
    error_type:
      turn.status === "failed" ? (stringOf(failure?.details.code) ?? "turn_failed") : null,
    calls: placeCalls({
      turn_index,
      start_ms,
      calls: rows.calls.filter((call) => call.turn_index === turn_index),
      audit,
    }),
    messages: rows.messages.filter((message) => message.turn_index === turn_index),
    system_prompt: stringOf(started?.details.system_prompt),
  };
}

function agentModel(config: Record<string, unknown>, agent: "chat_agent" | "event_agent"): string {
  const section = config[agent];
  if (section !== null && typeof section === "object" && "model" in section) {
    const model = (section as { model: unknown }).model;
    if (typeof model === "string") return model;
  }
  return "sim";
}

/** `provider:model` as the runtime writes it (turn_start, *_request audit rows), or a config's. */
export function modelName(value: unknown): ModelName {
  const text = typeof value === "string" && value !== "" ? value : "sim";
  const colon = text.indexOf(":");
  if (colon < 0) return { provider: text, model: text };
  return { provider: text.slice(0, colon), model: text.slice(colon + 1) };
}

export function stringOf(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
