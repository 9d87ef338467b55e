import { z } from "zod";
import { ToolCallEvent } from "../../domain/events.js";
import type { MessageRole } from "../../domain/messages.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionOverview,
  SessionRecord,
  TurnRecord,
  TurnRecordStatus,
} from "../../domain/records.js";
import type { ToolInvocationMode } from "../../domain/session-config.js";
import { modeOf } from "../../domain/session-config.js";
import type { AgentRole, CallKind, UsageCallRecord } from "../../domain/usage.js";
import { parseJsonText } from "../../domain/validation.js";

/** Raw rows as SQLite returns them, and their mapping to the seed's records. */

const JsonObject = z.record(z.string(), z.unknown());
const ToolCalls = z.array(ToolCallEvent);

export interface SessionRow {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  config_json: string;
}

export interface ListedSessionRow {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  turn_count: number;
  folded_tokens: number;
}

export interface ListedOverviewRow extends ListedSessionRow {
  mode: unknown;
  chat_model: unknown;
  event_model: unknown;
}

/** A model string from a stored config, or the default model when it names none usable. */
function modelString(value: unknown): string {
  return typeof value === "string" && value.length > 0 ? value : "sim";
}

export function toSessionOverview(row: ListedOverviewRow, total_tokens: number): SessionOverview {
  return {
    id: row.id,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
    turn_count: row.turn_count,
    total_tokens,
    tool_invocation_mode: modeOf({ tool_invocation_mode: row.mode }),
    chat_model: modelString(row.chat_model),
    event_model: modelString(row.event_model),
  };
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  const config = parseJsonText(JsonObject, row.config_json, `session ${row.id} config`);
  return {
    id: row.id,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
    tool_invocation_mode: modeOf(config),
    config,
  };
}

export interface MessageRow {
  id: number;
  session_id: string;
  turn_index: number;
  role: string;
  content: string;
  name: string | null;
  tool_call_id: string | null;
  tool_calls_json: string;
  created_at: string;
}

export function toMessageRecord(row: MessageRow): MessageRecord {
  return {
    id: row.id,
    session_id: row.session_id,
    turn_index: row.turn_index,
    role: row.role as MessageRole,
    content: row.content,
    name: row.name,
    tool_call_id: row.tool_call_id,
    tool_calls: parseJsonText(ToolCalls, row.tool_calls_json, `message ${row.id} tool_calls`),
    created_at: row.created_at,
  };
}

export interface AuditRow {
  id: number;
  session_id: string;
  turn_index: number | null;
  round_index: number | null;
  event: string;
  details_json: string;
  created_at: string;
}

export function toAuditRecord(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    session_id: row.session_id,
    turn_index: row.turn_index,
    round_index: row.round_index,
    event: row.event,
    details: parseJsonText(JsonObject, row.details_json, `audit log ${row.id} details`),
    created_at: row.created_at,
  };
}

export interface UsageRow {
  id: number;
  turn_index: number;
  round_index: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  ttft_ms: number | null;
  elapsed_ms: number;
  agent: string;
  call_kind: string;
  event_id: string | null;
  event_name: string | null;
  used_fallback: number;
  tool_latency_ms: number | null;
  metric_key: string | null;
  estimated: number;
  created_at: string;
}

/** Key order follows the seed's expected dict, so printed records read the same in both labs. */
export function toUsageCallRecord(row: UsageRow, mode: ToolInvocationMode): UsageCallRecord {
  return {
    id: row.id,
    turn_index: row.turn_index,
    round_index: row.round_index,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    cached_tokens: row.cached_tokens,
    ttft_ms: row.ttft_ms,
    elapsed_ms: row.elapsed_ms,
    mode,
    agent: row.agent as AgentRole,
    call_kind: row.call_kind as CallKind,
    event_id: row.event_id,
    event_name: row.event_name,
    used_fallback: row.used_fallback !== 0,
    tool_latency_ms: row.tool_latency_ms,
    metric_key: row.metric_key,
    estimated: row.estimated !== 0,
    created_at: row.created_at,
  };
}

export interface TurnRow {
  turn_index: number;
  user_message: string;
  started_at: string;
  completed_at: string | null;
  wall_time_ms: number | null;
  status: string | null;
  runner: string | null;
}

export function toTurnRecord(row: TurnRow): TurnRecord {
  // Legacy rows predate the status column: a completion time is all they can tell.
  const status = (row.status ??
    (row.completed_at === null ? "running" : "completed")) as TurnRecordStatus;
  return { ...row, status };
}
