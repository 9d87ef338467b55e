import type { z } from "zod";
import { isWellFormedText } from "../domain/json-limits.js";
import { checkMessageProtocol } from "../domain/messages.js";
import {
  fitsDepth,
  isCount,
  isFiniteNonNegative,
  isId,
  isIndex,
  isMilliseconds,
  isPlainRecord,
  passes,
  TOKEN_KEYS,
  text,
} from "./input-checks.js";
import {
  type AppendRecordsOptions,
  type ClaimTurnOptions,
  checkTokenAccounting,
} from "./store-inputs.js";

/**
 * A round's records as the store keeps them after its checks: every default filled in, the usage
 * rows' `usage_source` and `estimated` agreeing. The runtime builds its batches in this shape.
 */
export type RuntimeRecords = z.output<typeof AppendRecordsOptions>;
export type RuntimeUsage = RuntimeRecords["usage"][number];
export type RuntimeAudit = RuntimeRecords["audit"][number];
/** A turn's claim as the runtime makes it (turn-lock.ts), in the store's checked shape. */
export type RuntimeClaim = z.output<typeof ClaimTurnOptions>;

/** Batches and claims handed over by `runtimeRecords` and `runtimeClaim`, until let go of. */
const VOUCHED = new WeakSet<object>();

/**
 * Hands the store a batch the runtime built itself (turn-records.ts). zod's job is the data that
 * comes from outside the process: HTTP bodies, CLI flags, config, rows read back, a library
 * caller's arguments. The runtime's batch is built in the store's own output type, every default
 * given, so the compiler checks its shape: the store does not walk its keys and copy it as it does
 * a caller's input (fast-inputs.ts), which was about 5% of a turn's own time. A key the type does
 * not name would be stored (the compiler refuses one only in an object literal), so a test holds
 * every batch of real turns to its zod output (runtime-batches.test.ts). The store still checks
 * every value a type cannot state (`holds`): indexes, times and counts, the token accounting, the
 * message protocol, the lengths a provider's strings may have, and the objects that come from
 * outside (a tool call's arguments as the model wrote them, audit details, a provider's raw usage)
 * for what zod's record reads otherwise: plain, no symbol key, no own `__proto__` or
 * `constructor`, not too deep. A batch that fails any of them goes the way of any caller's input, to be refused (or
 * stored) as zod has it. The batch is not copied: the runtime must not change it, or what it holds
 * (its history's messages), once handed over. Not part of the public API: a library caller's batch
 * is always checked whole.
 */
export function runtimeRecords(records: RuntimeRecords): AppendRecordsOptions {
  VOUCHED.add(records);
  return records;
}

const isVouched = (input: unknown): input is object =>
  typeof input === "object" && input !== null && VOUCHED.has(input);

/** A turn's claim, handed over as `runtimeRecords` hands over a batch (the same kind of checks). */
export function runtimeClaim(claim: RuntimeClaim): ClaimTurnOptions {
  VOUCHED.add(claim);
  return claim;
}

/** The claim as it is, when the runtime made it and its values hold; else null (check it all). */
export function vouchedClaim(input: unknown): RuntimeClaim | null {
  if (!isVouched(input)) return null;
  const claim = input as RuntimeClaim;
  const { audit, expected } = claim;
  const holds =
    // The user's own text: a lone surrogate is the schema's to judge.
    isWellFormedText(claim.user_message) &&
    isId(claim.runner) &&
    (claim.is_runner_alive === undefined || typeof claim.is_runner_alive === "function") &&
    (audit === undefined || (audit.event.length > 0 && isRecordFromOutside(audit.details))) &&
    (expected === undefined ||
      (typeof expected.updated_at === "string" && Number.isSafeInteger(expected.incarnation)));
  return holds ? claim : null;
}

/** The batch as it is, when the runtime built it and its values hold; else null (check it all). */
export function vouchedRecords(input: unknown): RuntimeRecords | null {
  if (!isVouched(input)) return null;
  const records = input as RuntimeRecords;
  return holds(records) ? records : null;
}

/**
 * A record zod's `boundedRecord` stores as it is: a plain object, not too deep, with no own
 * `__proto__` (zod's copy drops it, JSON would write it), no own `constructor` (zod refuses a
 * function there) and no symbol key (zod refuses it). A hidden key is not looked for: zod's copy
 * and JSON both leave it out, so the row is the same.
 */
function isRecordFromOutside(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  if (Object.hasOwn(value, "__proto__") || Object.hasOwn(value, "constructor")) return false;
  return Object.getOwnPropertySymbols(value).length === 0 && fitsDepth(value, 0);
}

/** A required field that may be null (never absent: the runtime gives every field). */
const orNull = (value: unknown, check: (value: unknown) => boolean): boolean =>
  value === null || check(value);

function holds(records: RuntimeRecords): boolean {
  const { rollup_turn, complete_turn: end } = records;
  if (!(rollup_turn === undefined || isIndex(rollup_turn))) return false;
  if (typeof records.touch_session !== "boolean") return false;
  if (end !== undefined) {
    if (!isIndex(end.turn_index)) return false;
    if (!orNull(end.wall_time_ms, isMilliseconds)) return false;
  }
  return (
    records.usage.every(usageHolds) &&
    records.audit.every(auditHolds) &&
    records.message_groups.every(groupHolds) &&
    records.payloads.every(payloadHolds)
  );
}

function usageHolds(entry: RuntimeUsage): boolean {
  const { usage, metadata: m } = entry;
  if (!isIndex(entry.turn_index) || !isIndex(entry.round_index)) return false;
  if (!isMilliseconds(entry.elapsed_ms) || !orNull(entry.ttft_ms, isMilliseconds)) return false;
  for (const key of TOKEN_KEYS) if (!isCount(usage[key])) return false;
  return (
    orNull(m.event_id, isId) &&
    orNull(m.event_name, isId) &&
    orNull(m.metric_key, isId) &&
    orNull(m.tool_latency_ms, isMilliseconds) &&
    orNull(m.cost_usd, isFiniteNonNegative) &&
    orNull(m.cost_estimated_usd, isFiniteNonNegative) &&
    orNull(m.response_model, text(0, 500)) &&
    orNull(m.response_id, text(0, 500)) &&
    orNull(m.system_fingerprint, text(0, 500)) &&
    orNull(m.finish_reason, text(0, 100)) &&
    orNull(m.raw_usage, isPlainRecord) &&
    // What the schema's transform makes of any input: `estimated` follows the source.
    m.estimated === (m.usage_source === "estimated") &&
    (m.call_kind === "tool_execution" || passes((c) => checkTokenAccounting(usage, c, [])))
  );
}

function auditHolds(entry: RuntimeAudit): boolean {
  return (
    entry.event.length > 0 &&
    (entry.turn_index === null || isIndex(entry.turn_index)) &&
    (entry.round_index === null || isIndex(entry.round_index)) &&
    isRecordFromOutside(entry.details)
  );
}

function groupHolds(group: RuntimeRecords["message_groups"][number]): boolean {
  if (!isIndex(group.turn_index) || group.messages.length === 0) return false;
  for (const message of group.messages) {
    if (!(message.name === undefined || isId(message.name))) return false;
    if (!(message.tool_call_id === undefined || isId(message.tool_call_id))) return false;
    for (const call of message.tool_calls) {
      if (!isId(call.id) || !isId(call.name) || !isRecordFromOutside(call.arguments)) return false;
    }
    if (!passes((c) => checkMessageProtocol(message, c))) return false;
  }
  return true;
}

function payloadHolds(entry: RuntimeRecords["payloads"][number]): boolean {
  return (
    isId(entry.metric_key) &&
    isIndex(entry.turn_index) &&
    isIndex(entry.round_index) &&
    isCount(entry.request_bytes) &&
    isCount(entry.response_bytes)
  );
}
