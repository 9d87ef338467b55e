import type { z } from "zod";
import { isWellFormedText } from "../domain/json-limits.js";
import { checkMessageProtocol } from "../domain/messages.js";
import {
  fitsDepth,
  isCount,
  isId,
  isIndex,
  isMilliseconds,
  isPlainRecord,
  nullable,
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
 * caller's arguments. The runtime's batch is none of these: its shape is the store's own output
 * type, checked by the compiler, and its values came through those checks where they entered (a
 * provider's stream, a tool's arguments). So the store does not walk its keys and copy it as it
 * does a caller's input (fast-inputs.ts), which was about 5% of a turn's own time. It still checks
 * every value a type cannot state (`holds`): indexes, times and counts, the token accounting,
 * the message protocol, the depth of details and arguments, the lengths a provider's strings may
 * have. A batch that fails any of them goes the way of any caller's input, to be refused with the
 * same message. Not part of the public API: a library caller's batch is always checked whole.
 */
export function runtimeRecords(records: RuntimeRecords): AppendRecordsOptions {
  VOUCHED.add(records);
  return records;
}

/** A turn's claim, handed over as `runtimeRecords` hands over a batch (the same checks' kind). */
export function runtimeClaim(claim: RuntimeClaim): ClaimTurnOptions {
  VOUCHED.add(claim);
  return claim;
}

/** The claim as it is, when the runtime made it and its values hold; else null (check it all). */
export function vouchedClaim(input: unknown): RuntimeClaim | null {
  if (typeof input !== "object" || input === null || !VOUCHED.has(input)) return null;
  const claim = input as RuntimeClaim;
  const { audit } = claim;
  const holds =
    // The user's own text: a lone surrogate is the schema's to judge.
    isWellFormedText(claim.user_message) &&
    isId(claim.runner) &&
    (audit === undefined || (audit.event.length > 0 && fitsDepth(audit.details, 0)));
  return holds ? claim : null;
}

/** The batch as it is, when the runtime built it and its values hold; else null (check it all). */
export function vouchedRecords(input: unknown): RuntimeRecords | null {
  if (typeof input !== "object" || input === null || !VOUCHED.has(input)) return null;
  const records = input as RuntimeRecords;
  return holds(records) ? records : null;
}

function holds(records: RuntimeRecords): boolean {
  const { rollup_turn, complete_turn: end } = records;
  if (!(rollup_turn === undefined || isIndex(rollup_turn))) return false;
  if (end !== undefined) {
    if (!isIndex(end.turn_index)) return false;
    if (!(end.wall_time_ms === null || isMilliseconds(end.wall_time_ms))) return false;
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
  if (!isMilliseconds(entry.elapsed_ms) || !nullable(entry.ttft_ms, isMilliseconds)) return false;
  for (const key of TOKEN_KEYS) if (!isCount(usage[key])) return false;
  return (
    nullable(m.event_id, isId) &&
    nullable(m.event_name, isId) &&
    nullable(m.metric_key, isId) &&
    nullable(m.tool_latency_ms, isMilliseconds) &&
    nullable(m.cost_usd, isMilliseconds) &&
    nullable(m.cost_estimated_usd, isMilliseconds) &&
    nullable(m.response_model, text(0, 500)) &&
    nullable(m.response_id, text(0, 500)) &&
    nullable(m.system_fingerprint, text(0, 500)) &&
    nullable(m.finish_reason, text(0, 100)) &&
    nullable(m.raw_usage, isPlainRecord) &&
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
    fitsDepth(entry.details, 0)
  );
}

function groupHolds(group: RuntimeRecords["message_groups"][number]): boolean {
  if (!isIndex(group.turn_index) || group.messages.length === 0) return false;
  for (const message of group.messages) {
    if (!(message.name === undefined || isId(message.name))) return false;
    if (!(message.tool_call_id === undefined || isId(message.tool_call_id))) return false;
    for (const call of message.tool_calls) {
      if (!isId(call.id) || !isId(call.name) || !fitsDepth(call.arguments, 0)) return false;
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
