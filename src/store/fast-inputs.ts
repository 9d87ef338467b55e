import type { z } from "zod";
import { isWellFormedText } from "../domain/json-limits.js";
import { checkMessageProtocol } from "../domain/messages.js";
import type { TokenUsage } from "../domain/usage.js";
import { parseInput } from "../domain/validation.js";
import {
  definedOnly,
  fitsDepth,
  isBoolean,
  isCount,
  isId,
  isIndex,
  isMilliseconds,
  isPlainRecord,
  isStrictRecord,
  nullable,
  passes,
  TOKEN_KEYS,
  text,
} from "./input-checks.js";
import { vouchedClaim, vouchedRecords } from "./runtime-records.js";
import {
  AppendAuditOptions,
  type AppendMessagesOptions,
  AppendRecordsOptions,
  type AppendUsageOptions,
  ClaimTurnOptions,
  checkTokenAccounting,
  FinishedTurnStatus,
} from "./store-inputs.js";

type ValidAudit = z.output<typeof AppendAuditOptions>;
type ValidRecords = z.output<typeof AppendRecordsOptions>;
type ValidMessages = z.output<typeof AppendMessagesOptions>;
type ValidUsage = z.output<typeof AppendUsageOptions>;
type ValidClaim = z.output<typeof ClaimTurnOptions>;

/**
 * The store validates every row it is given with zod (store-inputs.ts), and a round's batch is a
 * dozen rows: zod's generic walk over them was the largest part of what a round cost the lab
 * beyond its SQL. Here the plain shapes every writer sends (audit entries, usage rows, message
 * groups) are checked directly; anything else, and anything refused, goes through zod, so the
 * accepted output and every refusal message stay zod's. The checks are as strict as the schemas
 * or stricter, never looser: a value they doubt is zod's to judge (fast-inputs.test.ts compares
 * both on every one-value mutation of such batches). The runtime's own batches and claims come
 * first to runtime-records.ts, which trusts their shape to the compiler and checks their values.
 */

const AUDIT_KEYS = new Set(["event", "details", "turn_index", "round_index"]);
const RECORD_KEYS = new Set([
  "message_groups",
  "usage",
  "audit",
  "payloads",
  "rollup_turn",
  "complete_turn",
  "touch_session",
]);
const AppendRecordsRest = AppendRecordsOptions.omit({
  audit: true,
  usage: true,
  message_groups: true,
});
const COMPLETE_KEYS = new Set(["turn_index", "wall_time_ms", "status"]);
const STATUSES = new Set<string>(FinishedTurnStatus.options);
const CLAIM_KEYS = new Set(["user_message", "runner", "is_runner_alive", "audit", "expected"]);
const EXPECTED_KEYS = new Set(["updated_at", "incarnation"]);
const CLAIM_AUDIT_KEYS = new Set(["event", "details"]);
const USAGE_KEYS = new Set([
  "turn_index",
  "round_index",
  "usage",
  "ttft_ms",
  "elapsed_ms",
  "metadata",
]);
const TOKEN_KEY_SET = new Set<string>(TOKEN_KEYS);
const METADATA_KEYS = new Set([
  "agent",
  "call_kind",
  "event_id",
  "event_name",
  "used_fallback",
  "tool_latency_ms",
  "metric_key",
  "estimated",
  "usage_source",
  "cost_usd",
  "cost_estimated_usd",
  "response_model",
  "response_id",
  "system_fingerprint",
  "finish_reason",
  "refusal",
  "raw_usage",
]);
const AGENTS = new Set(["chat_agent", "event_agent", "event_kernel"]);
const CALL_KINDS = new Set(["chat_completion", "argument_fallback", "tool_execution"]);
const SOURCES = new Set(["endpoint", "estimated", "provider_timings"]);
const GROUP_KEYS = new Set(["turn_index", "messages"]);
const MESSAGE_KEYS = new Set([
  "role",
  "content",
  "name",
  "tool_call_id",
  "tool_calls",
  "reasoning",
  "refusal",
]);
const ROLES = new Set(["system", "user", "assistant", "tool"]);
const CALL_KEYS = new Set(["id", "name", "arguments", "raw_arguments"]);

/** `AppendAuditOptions.parse(input)` for the plain shape, or null: ask zod. */
function fastAudit(input: unknown): ValidAudit | null {
  if (!isStrictRecord(input, AUDIT_KEYS)) return null;
  const { event, details, turn_index, round_index } = input;
  if (typeof event !== "string" || event.length === 0) return null;
  if (details !== undefined && !(isPlainRecord(details) && fitsDepth(details, 0))) return null;
  if (!(turn_index === undefined || turn_index === null || isIndex(turn_index))) return null;
  if (!(round_index === undefined || round_index === null || isIndex(round_index))) return null;
  return {
    event,
    // zod's record output: a copy with the same keys in the same order.
    details: details === undefined ? {} : { ...details },
    turn_index: turn_index ?? null,
    round_index: round_index ?? null,
  };
}

/** `parseInput(AppendAuditOptions, input, where)`, the plain shape checked without zod. */
export function parseAppendAudit(input: unknown, where: string): ValidAudit {
  return fastAudit(input) ?? parseInput(AppendAuditOptions, input, where);
}

/**
 * `parseInput(AppendRecordsOptions, input, "appendRecords")`: the runtime's own batch as it is
 * (its shape the compiler's, its values checked), a plain batch checked without zod, else zod.
 */
export function parseAppendRecords(input: unknown): ValidRecords {
  return (
    vouchedRecords(input) ??
    fastRecords(input) ??
    parseInput(AppendRecordsOptions, input, "appendRecords")
  );
}

function fastRecords(input: unknown): ValidRecords | null {
  if (!isStrictRecord(input, RECORD_KEYS)) return null;
  const audit = fastList(input.audit, fastAudit);
  const usage = fastList(input.usage, fastUsage);
  const message_groups = fastList(input.message_groups, fastGroup);
  if (audit === null || usage === null || message_groups === null) return null;
  const others = fastRest(input) ?? AppendRecordsRest.safeParse(restOf(input));
  return others.success ? { ...others.data, message_groups, usage, audit } : null;
}

/** The batch without the entries fastRecords checked itself: what AppendRecordsRest reads. */
function restOf(input: Record<string, unknown>): Record<string, unknown> {
  const { audit: _audit, usage: _usage, message_groups: _groups, ...rest } = input;
  return rest;
}

type RecordsRest = z.output<typeof AppendRecordsRest>;

/**
 * The batch's other fields as the runtime sends them (no payloads, a turn to roll up, a turn's
 * end), or null: ask zod. A key given as undefined is zod's to judge.
 */
function fastRest(input: Record<string, unknown>): { success: true; data: RecordsRest } | null {
  const { payloads, rollup_turn, complete_turn: end, touch_session = true } = input;
  if (!definedOnly(input, ["payloads", "rollup_turn", "complete_turn", "touch_session"])) {
    return null;
  }
  if (!(payloads === undefined || (Array.isArray(payloads) && payloads.length === 0))) return null;
  if (!(rollup_turn === undefined || isIndex(rollup_turn))) return null;
  if (typeof touch_session !== "boolean") return null;
  const data: RecordsRest = { payloads: [], touch_session };
  if (rollup_turn !== undefined) data.rollup_turn = rollup_turn;
  if (end !== undefined) {
    if (!isStrictRecord(end, COMPLETE_KEYS)) return null;
    if (!definedOnly(end, ["status"])) return null;
    const { turn_index, wall_time_ms, status = "completed" } = end;
    if (!isIndex(turn_index) || !(wall_time_ms === null || isMilliseconds(wall_time_ms))) {
      return null;
    }
    if (!STATUSES.has(status as string)) return null;
    data.complete_turn = {
      turn_index,
      wall_time_ms,
      status: status as NonNullable<RecordsRest["complete_turn"]>["status"],
    };
  }
  return { success: true, data };
}

/** `parseInput(ClaimTurnOptions, input, "claimTurn")`: as parseAppendRecords, for a turn's claim. */
export function parseClaimTurn(input: unknown): ValidClaim {
  return (
    vouchedClaim(input) ?? fastClaim(input) ?? parseInput(ClaimTurnOptions, input, "claimTurn")
  );
}

function fastClaim(input: unknown): ValidClaim | null {
  if (!isStrictRecord(input, CLAIM_KEYS)) return null;
  if (!definedOnly(input, ["is_runner_alive", "audit", "expected"])) return null;
  const { user_message, runner, is_runner_alive, audit, expected } = input;
  if (typeof user_message !== "string" || !isWellFormedText(user_message)) return null;
  if (!isId(runner)) return null;
  if (!(is_runner_alive === undefined || typeof is_runner_alive === "function")) return null;
  const claim: ValidClaim = { user_message, runner };
  if (is_runner_alive !== undefined) {
    claim.is_runner_alive = is_runner_alive as NonNullable<ValidClaim["is_runner_alive"]>;
  }
  if (audit !== undefined) {
    if (!isStrictRecord(audit, CLAIM_AUDIT_KEYS)) return null;
    if (!definedOnly(audit, ["details"])) return null;
    const { event, details } = audit;
    if (typeof event !== "string" || event.length === 0) return null;
    if (details !== undefined && !(isPlainRecord(details) && fitsDepth(details, 0))) return null;
    // zod's record output: a copy with the same keys in the same order.
    claim.audit = { event, details: details === undefined ? {} : { ...details } };
  }
  if (expected !== undefined) {
    if (!isStrictRecord(expected, EXPECTED_KEYS)) return null;
    const { updated_at, incarnation } = expected;
    if (typeof updated_at !== "string" || !Number.isSafeInteger(incarnation)) return null;
    claim.expected = { updated_at, incarnation: incarnation as number };
  }
  return claim;
}

/** Each entry of an optional array (default []) checked by `check`, or null: ask zod. */
export function fastList<Valid>(
  value: unknown,
  check: (entry: unknown) => Valid | null,
): Valid[] | null {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return null;
  const valid: Valid[] = [];
  for (const entry of value) {
    const checked = check(entry);
    if (checked === null) return null;
    valid.push(checked);
  }
  return valid;
}

/** `AppendUsageOptions.parse(input)` for the plain shape, or null: ask zod. */
function fastUsage(input: unknown): ValidUsage | null {
  if (!isStrictRecord(input, USAGE_KEYS)) return null;
  const { turn_index, round_index, usage: counts, ttft_ms, elapsed_ms, metadata: given } = input;
  if (!isIndex(turn_index) || !isIndex(round_index) || !isMilliseconds(elapsed_ms)) return null;
  if (!nullable(ttft_ms, isMilliseconds)) return null;
  if (!isStrictRecord(counts, TOKEN_KEY_SET)) return null;
  const usage = {} as TokenUsage;
  for (const key of TOKEN_KEYS) {
    // A default fills in for undefined only: null is refused.
    const count = counts[key] === undefined ? 0 : counts[key];
    if (!isCount(count)) return null;
    usage[key] = count;
  }
  const metadata = given === undefined ? {} : given;
  if (!isStrictRecord(metadata, METADATA_KEYS)) return null;
  const m = metadata;
  const agent = m.agent === undefined ? "chat_agent" : m.agent;
  const call_kind = m.call_kind === undefined ? "chat_completion" : m.call_kind;
  const raw = m.raw_usage;
  if (
    !(AGENTS.has(agent as string) && CALL_KINDS.has(call_kind as string)) ||
    !(nullable(m.event_id, isId) && nullable(m.event_name, isId)) ||
    !(isBoolean(m.used_fallback) && isBoolean(m.estimated) && isBoolean(m.refusal)) ||
    !(nullable(m.tool_latency_ms, isMilliseconds) && nullable(m.metric_key, isId)) ||
    !nullable(m.usage_source, (source) => SOURCES.has(source as string)) ||
    !(nullable(m.cost_usd, isMilliseconds) && nullable(m.cost_estimated_usd, isMilliseconds)) ||
    !(nullable(m.response_model, text(0, 500)) && nullable(m.response_id, text(0, 500))) ||
    !(nullable(m.system_fingerprint, text(0, 500)) && nullable(m.finish_reason, text(0, 100))) ||
    !nullable(raw, isPlainRecord)
  ) {
    return null;
  }
  if (call_kind !== "tool_execution" && !passes((c) => checkTokenAccounting(usage, c, []))) {
    return null;
  }
  const estimated = (m.estimated as boolean | undefined) ?? false;
  // The schema's transform: a given usage_source wins, `estimated` follows it.
  const usage_source = (m.usage_source ?? (estimated ? "estimated" : "endpoint")) as NonNullable<
    ValidUsage["metadata"]["usage_source"]
  >;
  return {
    turn_index,
    round_index,
    usage,
    ttft_ms: (ttft_ms as number | null | undefined) ?? null,
    elapsed_ms,
    metadata: {
      agent: agent as ValidUsage["metadata"]["agent"],
      call_kind: call_kind as ValidUsage["metadata"]["call_kind"],
      event_id: (m.event_id as string | null | undefined) ?? null,
      event_name: (m.event_name as string | null | undefined) ?? null,
      used_fallback: (m.used_fallback as boolean | undefined) ?? false,
      tool_latency_ms: (m.tool_latency_ms as number | null | undefined) ?? null,
      metric_key: (m.metric_key as string | null | undefined) ?? null,
      estimated: usage_source === "estimated",
      usage_source,
      cost_usd: (m.cost_usd as number | null | undefined) ?? null,
      cost_estimated_usd: (m.cost_estimated_usd as number | null | undefined) ?? null,
      response_model: (m.response_model as string | null | undefined) ?? null,
      response_id: (m.response_id as string | null | undefined) ?? null,
      system_fingerprint: (m.system_fingerprint as string | null | undefined) ?? null,
      finish_reason: (m.finish_reason as string | null | undefined) ?? null,
      refusal: (m.refusal as boolean | undefined) ?? false,
      raw_usage: raw === undefined || raw === null ? null : { ...(raw as Record<string, unknown>) },
    },
  };
}

/** `AppendMessagesOptions.parse(input)` for the plain shape, or null: ask zod. */
function fastGroup(input: unknown): ValidMessages | null {
  if (!isStrictRecord(input, GROUP_KEYS)) return null;
  const { turn_index, messages } = input;
  if (!isIndex(turn_index) || !Array.isArray(messages) || messages.length === 0) return null;
  const valid = fastList(messages, fastMessage);
  return valid === null ? null : { turn_index, messages: valid };
}

type ValidMessage = ValidMessages["messages"][number];

function fastMessage(input: unknown): ValidMessage | null {
  if (!isStrictRecord(input, MESSAGE_KEYS)) return null;
  if (!definedOnly(input, ["name", "tool_call_id", "reasoning", "refusal"])) return null;
  const { role, content, name, tool_call_id, reasoning, refusal } = input;
  if (!ROLES.has(role as string) || typeof content !== "string") return null;
  if (!(name === undefined || isId(name)) || !(tool_call_id === undefined || isId(tool_call_id))) {
    return null;
  }
  if (!(reasoning === undefined || typeof reasoning === "string")) return null;
  if (!(refusal === undefined || typeof refusal === "string")) return null;
  const tool_calls = fastList(input.tool_calls, fastToolCall);
  if (tool_calls === null) return null;
  const message = {
    role: role as ValidMessage["role"],
    content,
    ...(name === undefined ? {} : { name: name as string }),
    ...(tool_call_id === undefined ? {} : { tool_call_id: tool_call_id as string }),
    tool_calls,
    ...(reasoning === undefined ? {} : { reasoning: reasoning as string }),
    ...(refusal === undefined ? {} : { refusal: refusal as string }),
  };
  return passes((c) => checkMessageProtocol(message, c)) ? message : null;
}

/** A tool call as zod's ToolCallEvent reads it, for the plain shape, or null: ask zod. */
export function fastToolCall(input: unknown): ValidMessage["tool_calls"][number] | null {
  if (!isStrictRecord(input, CALL_KEYS)) return null;
  const { id, name, arguments: args, raw_arguments } = input;
  if (!isId(id) || !isId(name) || typeof raw_arguments !== "string") return null;
  if (!isPlainRecord(args) || !fitsDepth(args, 0)) return null;
  return { id, name, arguments: { ...args }, raw_arguments };
}
