import type Database from "better-sqlite3";
import type { z } from "zod";
import { SessionNotFoundError, TurnNotFoundError } from "../../domain/errors.js";
import { toWellFormedText } from "../../domain/json-limits.js";
import type { ChatMessage } from "../../domain/messages.js";
import { isSecretKey, REDACTED, redactSecretText } from "../../domain/secrets.js";
import type {
  AppendAuditOptions,
  AppendRecordsOptions,
  AppendRecordsResult,
  AppendUsageOptions,
} from "../store-inputs.js";
import type { CallPayloads, PayloadRowParams } from "./call-payloads.js";
import { toMessageRowParams, toUsageRowParams } from "./rows.js";
import type { Statements } from "./statements.js";
import type { UsageRollups } from "./usage-rollups.js";

type ValidAudit = z.output<typeof AppendAuditOptions>;
type ValidUsage = z.output<typeof AppendUsageOptions>;
type ValidRecords = z.output<typeof AppendRecordsOptions>;

/** `redactSecrets(toWellFormed(value))` in one walk, one copy instead of two. */
function storableDetails(value: unknown): unknown {
  if (typeof value === "string") return redactSecretText(toWellFormedText(value));
  if (Array.isArray(value)) return value.map((item) => storableDetails(item));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => {
      const clean = toWellFormedText(key);
      return [clean, isSecretKey(clean) ? REDACTED : storableDetails(child)];
    }),
  );
}

/** An audit row as `appendAudit` writes it: details repaired and redacted, never refused. */
export function auditRowParams(
  sessionId: string,
  input: ValidAudit,
  createdAt: string,
): Record<string, unknown> {
  return {
    session_id: sessionId,
    turn_index: input.turn_index,
    round_index: input.round_index,
    event: input.event,
    // Audit details come from endpoints and tools: repaired and redacted, never refused.
    details_json: JSON.stringify(storableDetails(input.details)),
    created_at: createdAt,
  };
}

/** A usage row as `appendUsage` writes it. */
export function usageRowParams(
  sessionId: string,
  input: ValidUsage,
  createdAt: string,
): Record<string, unknown> {
  const { usage, metadata } = input;
  return toUsageRowParams(sessionId, {
    turn_index: input.turn_index,
    round_index: input.round_index,
    ttft_ms: input.ttft_ms,
    elapsed_ms: input.elapsed_ms,
    created_at: createdAt,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens,
    cached_tokens: usage.cached_tokens,
    reasoning_tokens: usage.reasoning_tokens,
    cache_write_tokens: usage.cache_write_tokens,
    agent: metadata.agent,
    call_kind: metadata.call_kind,
    event_id: metadata.event_id,
    event_name: metadata.event_name,
    used_fallback: metadata.used_fallback,
    tool_latency_ms: metadata.tool_latency_ms,
    metric_key: metadata.metric_key,
    usage_source: metadata.usage_source,
    cost_usd: metadata.cost_usd,
    cost_estimated_usd: metadata.cost_estimated_usd,
    response_model: metadata.response_model,
    response_id: metadata.response_id,
    system_fingerprint: metadata.system_fingerprint,
    finish_reason: metadata.finish_reason,
    refusal: metadata.refusal,
    raw_usage: metadata.raw_usage,
  });
}

/**
 * `appendRecords` for SQLite: a round's rows in one BEGIN IMMEDIATE transaction, so a turn commits
 * once per round instead of once per row, and a round is recorded whole or not at all. Payloads
 * are compressed before the transaction opens. The turns the batch names are checked once each,
 * up front: an unknown one refuses the batch before anything is written.
 */
export class RecordBatch {
  readonly #sql: Statements;
  readonly #payloads: CallPayloads;
  readonly #rollups: UsageRollups;
  /** Made once: better-sqlite3 builds five wrappers for every transaction function it is given. */
  readonly #transaction;

  constructor(
    db: Database.Database,
    sql: Statements,
    payloads: CallPayloads,
    rollups: UsageRollups,
  ) {
    this.#sql = sql;
    this.#payloads = payloads;
    this.#rollups = rollups;
    this.#transaction = db.transaction(
      (sessionId: string, input: ValidRecords, rows: PayloadRowParams[], createdAt: string) =>
        this.#write(sessionId, input, rows, createdAt),
    );
  }

  append(sessionId: string, input: ValidRecords, createdAt: string): AppendRecordsResult {
    const payloadRows = input.payloads.map((payload) =>
      this.#payloads.row(sessionId, payload, createdAt),
    );
    return this.#transaction.immediate(sessionId, input, payloadRows, createdAt);
  }

  #write(
    sessionId: string,
    input: ValidRecords,
    payloadRows: PayloadRowParams[],
    createdAt: string,
  ): AppendRecordsResult {
    if (this.#sql.selectSessionId.get(sessionId) === undefined) {
      throw new SessionNotFoundError(sessionId);
    }
    const turns = new Set<number>([
      ...input.message_groups.map((group) => group.turn_index),
      ...input.usage.map((entry) => entry.turn_index),
      ...input.payloads.map((entry) => entry.turn_index),
      ...(input.rollup_turn === undefined ? [] : [input.rollup_turn]),
      ...(input.complete_turn === undefined ? [] : [input.complete_turn.turn_index]),
    ]);
    for (const turnIndex of turns) {
      if (this.#sql.selectTurn.get(sessionId, turnIndex) === undefined) {
        throw new TurnNotFoundError(sessionId, turnIndex);
      }
    }
    for (const group of input.message_groups) {
      this.#insertMessages(sessionId, group.turn_index, group.messages, createdAt);
    }
    // The turns exist (checked above): a row not inserted is a metric key recorded before.
    const usage_inserted = input.usage.map(
      (entry) =>
        this.#sql.insertUsage.run(usageRowParams(sessionId, entry, createdAt)).changes === 1,
    );
    for (const entry of input.audit) {
      this.#sql.insertAudit.run(auditRowParams(sessionId, entry, createdAt));
    }
    const payloads_inserted = payloadRows.map((row) => this.#payloads.insertRow(row));
    const end = input.complete_turn;
    if (end !== undefined) {
      this.#sql.completeTurn.run(
        createdAt,
        end.wall_time_ms,
        end.status,
        sessionId,
        end.turn_index,
      );
    }
    const written =
      input.message_groups.length + input.usage.length + input.audit.length + payloadRows.length;
    const touched = written > 0 || end !== undefined;
    if (touched) this.#sql.touchSession.run(createdAt, sessionId);
    const turn_rollup =
      input.rollup_turn === undefined ? null : this.#rollups.turn(sessionId, input.rollup_turn);
    return {
      usage_inserted,
      payloads_inserted,
      turn_rollup,
      updated_at: touched ? createdAt : null,
    };
  }

  #insertMessages(
    sessionId: string,
    turnIndex: number,
    messages: readonly ChatMessage[],
    createdAt: string,
  ): void {
    for (const message of messages) {
      this.#sql.insertMessage.run(toMessageRowParams(sessionId, turnIndex, message, createdAt));
    }
  }
}
