import type Database from "better-sqlite3";
import type { z } from "zod";
import { SessionNotFoundError, TurnNotFoundError } from "../../domain/errors.js";
import { isPlainJsonWith, isWellFormedText, toWellFormedText } from "../../domain/json-limits.js";
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
import { type Statements, USAGE_COLUMNS } from "./statements.js";
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

/** A text of audit details stored as it is: well-formed, with nothing to redact. */
const isStorableText = (text: string) => isWellFormedText(text) && redactSecretText(text) === text;
/** A key of audit details stored as it is: well-formed, and no secret's name. */
const isStorableKey = (key: string) => isWellFormedText(key) && !isSecretKey(key);

/**
 * Whether `storableDetails` would give back the value as it is: plain objects and arrays of
 * JSON's own values only, every text well-formed with nothing to redact, no secret key. Such
 * details (nearly all a turn writes) are serialized as they are, without the copy.
 */
function isStorableAsIs(value: unknown): boolean {
  return isPlainJsonWith(value, isStorableText, isStorableKey);
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
    details_json: JSON.stringify(
      isStorableAsIs(input.details) ? input.details : storableDetails(input.details),
    ),
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

/** A usage row's values in USAGE_COLUMNS order, for the positional insertCheckedUsage. */
function usageRowValues(sessionId: string, input: ValidUsage, createdAt: string): unknown[] {
  const row = usageRowParams(sessionId, input, createdAt);
  return USAGE_COLUMNS.map((column) => row[column]);
}

/** The turns a batch names, each once, in the order first named. */
export function batchTurns(input: ValidRecords): number[] {
  const turns: number[] = [];
  const add = (turnIndex: number) => {
    if (!turns.includes(turnIndex)) turns.push(turnIndex);
  };
  for (const group of input.message_groups) add(group.turn_index);
  for (const entry of input.usage) add(entry.turn_index);
  for (const entry of input.payloads) add(entry.turn_index);
  if (input.rollup_turn !== undefined) add(input.rollup_turn);
  if (input.complete_turn !== undefined) add(input.complete_turn.turn_index);
  return turns;
}

/**
 * `appendRecords` for SQLite: a round's rows in one BEGIN IMMEDIATE transaction, so a turn commits
 * once per round instead of once per row, and a round is recorded whole or not at all. Payloads
 * are compressed before the transaction opens. The session and the turns the batch names are
 * checked once each, before the rows: an unknown one refuses the batch, rolled back whole.
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
    const end = input.complete_turn;
    const written =
      input.message_groups.length + input.usage.length + input.audit.length + payloadRows.length;
    const touched = (written > 0 && input.touch_session) || end !== undefined;
    const turns = batchTurns(input);
    const [only] = turns;
    if (turns.length === 1 && only !== undefined) {
      // A turn's round: one statement checks the turn and its session (and moves the session's
      // updated_at when touched); only when it finds nothing is the missing one looked up.
      const found = touched
        ? this.#sql.touchSessionOfTurn.run(createdAt, sessionId, sessionId, only).changes === 1
        : this.#sql.selectTurnOfSession.get(sessionId, only, sessionId) !== undefined;
      if (!found) {
        if (this.#sql.selectSessionId.get(sessionId) === undefined) {
          throw new SessionNotFoundError(sessionId);
        }
        throw new TurnNotFoundError(sessionId, only);
      }
    } else {
      // Touched first: no row changed means no session (a refusal rolls the whole batch back).
      const known = touched
        ? this.#sql.touchSession.run(createdAt, sessionId).changes === 1
        : this.#sql.selectSessionId.get(sessionId) !== undefined;
      if (!known) throw new SessionNotFoundError(sessionId);
      for (const turnIndex of turns) {
        if (this.#sql.selectTurn.get(sessionId, turnIndex) === undefined) {
          throw new TurnNotFoundError(sessionId, turnIndex);
        }
      }
    }
    // The session and the turns exist (checked above), so the rows need no guard of their own.
    for (const group of input.message_groups) {
      this.#insertMessages(sessionId, group.turn_index, group.messages, createdAt);
    }
    // A row not inserted is a metric key recorded before.
    const usage_inserted = input.usage.map(
      (entry) =>
        this.#sql.insertCheckedUsage.run(usageRowValues(sessionId, entry, createdAt)).changes === 1,
    );
    for (const entry of input.audit) {
      this.#sql.insertCheckedAudit.run(auditRowParams(sessionId, entry, createdAt));
    }
    const payloads_inserted = payloadRows.map((row) => this.#payloads.insertRow(row));
    if (end !== undefined) {
      this.#sql.completeTurn.run(
        createdAt,
        end.wall_time_ms,
        end.status,
        sessionId,
        end.turn_index,
      );
    }
    const rollupTurn = input.rollup_turn;
    const turn_rollup =
      rollupTurn === undefined
        ? null
        : this.#rollups.turn(
            sessionId,
            rollupTurn,
            // Written just above: the wall time need not be read back.
            end?.turn_index === rollupTurn ? { wall_time_ms: end.wall_time_ms } : undefined,
          );
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
