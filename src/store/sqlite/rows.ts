import { z } from "zod";
import type { ToolCallEvent } from "../../domain/events.js";
import { toWellFormed, toWellFormedText } from "../../domain/json-limits.js";
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
import type { SessionPageItem } from "../../domain/session-query.js";
import type { AgentRole, CallKind, UsageCallRecord, UsageSource } from "../../domain/usage.js";
import { parseJsonText } from "../../domain/validation.js";
import { storableRawUsage } from "../raw-usage.js";
import { parseStoredToolCalls } from "../stored-tool-calls.js";
import type { USAGE_COLUMNS } from "./statements.js";

/** Raw rows as SQLite returns them, and their mapping to the seed's records. */

const JsonObject = z.record(z.string(), z.unknown());

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

/** A row of the listSessions JSON: the ListedSessionRow columns in that order, as an array. */
export type ListedRow = [
  id: string,
  title: string,
  created_at: string,
  updated_at: string,
  turn_count: number,
  folded_tokens: number,
];

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

/** A row of the paged list (session-pages.ts): the overview plus what its filters read. */
export interface ListedPageRow extends ListedOverviewRow {
  experiment_id: string | null;
  last_status: string | null;
  /** The session's tags as a JSON array, from session_tags. */
  tags_json: string;
}

const Tags = z.array(z.string());

export function toSessionPageItem(row: ListedPageRow, total_tokens: number): SessionPageItem {
  return {
    ...toSessionOverview(row, total_tokens),
    tags: parseJsonText(Tags, row.tags_json, `session ${row.id} tags`),
    experiment_id: typeof row.experiment_id === "string" ? row.experiment_id : null,
    last_status: row.last_status as TurnRecordStatus | null,
  };
}

/**
 * A stored JSON object (a config, an audit row's details): what JSON.parse gives when it is an
 * object zod's record would copy as it is (every turn reads its session), else zod's reading,
 * with its refusal.
 */
export function storedObject(text: string, where: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (
      value !== null &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      !Object.hasOwn(value, "__proto__")
    ) {
      return value as Record<string, unknown>;
    }
  } catch {
    // parseJsonText names the problem.
  }
  return parseJsonText(JsonObject, text, where);
}

function storedConfig(row: SessionRow): Record<string, unknown> {
  return storedObject(row.config_json, `session ${row.id} config`);
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  const config = storedConfig(row);
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
  reasoning: string | null;
  refusal: string | null;
  created_at: string;
}

/** A message as its writers hold it: ChatMessage (appends, claims) or MessageRecord (imports). */
export interface StoredMessage {
  role: string;
  content: string;
  name?: string | null | undefined;
  tool_call_id?: string | null | undefined;
  tool_calls: readonly ToolCallEvent[];
  reasoning?: string | null | undefined;
  refusal?: string | null | undefined;
}

/** Model text: absent or empty is NULL, so "none" has one spelling. */
function optionalText(text: string | null | undefined): string | null {
  return text === undefined || text === null || text === "" ? null : toWellFormedText(text);
}

/** The named parameters of one messages row (statements.ts insertMessage), for every writer. */
export function toMessageRowParams(
  sessionId: string,
  turnIndex: number,
  message: StoredMessage,
  createdAt: string,
): Record<string, unknown> {
  return {
    session_id: sessionId,
    turn_index: turnIndex,
    role: message.role,
    // A model's text may hold a lone surrogate (a JSON `\ud800` escape in its stream): a turn
    // must not fail for it, and SQLite must not get invalid UTF-8, so it is repaired.
    content: toWellFormedText(message.content),
    name: message.name ?? null,
    tool_call_id: message.tool_call_id ?? null,
    tool_calls_json: JSON.stringify(toWellFormed(message.tool_calls)),
    reasoning: optionalText(message.reasoning),
    refusal: optionalText(message.refusal),
    created_at: createdAt,
  };
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
    tool_calls: parseStoredToolCalls(row.tool_calls_json, `message ${row.id} tool_calls`),
    reasoning: row.reasoning,
    refusal: row.refusal,
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
  reasoning_tokens: number;
  cache_write_tokens: number;
  usage_source: string | null;
  cost_usd: number | null;
  cost_estimated_usd: number | null;
  response_model: string | null;
  response_id: string | null;
  system_fingerprint: string | null;
  finish_reason: string | null;
  refusal: number;
  raw_usage_json: string | null;
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
    reasoning_tokens: row.reasoning_tokens,
    cache_write_tokens: row.cache_write_tokens,
    // Rows from before schema v3 say only whether they were estimated.
    usage_source: (row.usage_source ??
      (row.estimated !== 0 ? "estimated" : "endpoint")) as UsageSource,
    cost_usd: row.cost_usd,
    cost_estimated_usd: row.cost_estimated_usd,
    response_model: row.response_model,
    response_id: row.response_id,
    system_fingerprint: row.system_fingerprint,
    finish_reason: row.finish_reason,
    refusal: row.refusal !== 0,
    raw_usage:
      row.raw_usage_json === null
        ? null
        : parseJsonText(JsonObject, row.raw_usage_json, `usage row ${row.id} raw_usage`),
    created_at: row.created_at,
  };
}

/** What a writer knows of a call: a record without the ids the store assigns or derives. */
export type StoredCall = Omit<UsageCallRecord, "id" | "mode" | "estimated">;

/**
 * The named parameters of one usage row (statements.ts USAGE_COLUMNS), for appendUsage and
 * importSession alike. `estimated` is derived from `usage_source`, so the two never disagree.
 */
export function toUsageRowParams(sessionId: string, call: StoredCall): Record<string, unknown> {
  // A tool execution spends no model tokens, whatever a caller passes.
  const spends = call.call_kind !== "tool_execution";
  // One literal, no spread: this runs once per call, and a spread object binds slower.
  return {
    session_id: sessionId,
    turn_index: call.turn_index,
    round_index: call.round_index,
    prompt_tokens: spends ? call.prompt_tokens : 0,
    completion_tokens: spends ? call.completion_tokens : 0,
    total_tokens: spends ? call.total_tokens : 0,
    cached_tokens: spends ? call.cached_tokens : 0,
    reasoning_tokens: spends ? call.reasoning_tokens : 0,
    cache_write_tokens: spends ? call.cache_write_tokens : 0,
    ttft_ms: call.ttft_ms,
    elapsed_ms: call.elapsed_ms,
    created_at: call.created_at,
    agent: call.agent,
    call_kind: call.call_kind,
    event_id: call.event_id,
    event_name: call.event_name,
    used_fallback: call.used_fallback ? 1 : 0,
    tool_latency_ms: call.tool_latency_ms,
    metric_key: call.metric_key,
    estimated: call.usage_source === "estimated" ? 1 : 0,
    usage_source: call.usage_source,
    cost_usd: call.cost_usd,
    cost_estimated_usd: call.cost_estimated_usd,
    response_model: call.response_model,
    response_id: call.response_id,
    system_fingerprint: call.system_fingerprint,
    finish_reason: call.finish_reason,
    refusal: call.refusal ? 1 : 0,
    raw_usage_json: storableRawUsage(call.raw_usage),
  } satisfies Record<(typeof USAGE_COLUMNS)[number], unknown>;
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
