import type pg from "pg";
import { USAGE_COLUMNS } from "../sqlite/statements.js";
import { storageError } from "./connection.js";
import { RUNNING_TURN } from "./schema.js";

/**
 * The store's statements, each named: `pg` prepares a named statement once per connection and
 * then sends only its name and values (no parse, no plan per call), which is what keeps
 * `appendUsage` one lean round trip.
 */

const placeholders = (count: number, from = 1) =>
  Array.from({ length: count }, (_, index) => `$${index + from}`).join(", ");

/**
 * A guarded insert selects its values (INSERT ... SELECT ... WHERE EXISTS), where PostgreSQL
 * cannot take a parameter's type from the target column: the integer ones are cast.
 */
const INTEGER = new Set([
  "turn_index",
  "round_index",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "cached_tokens",
  "reasoning_tokens",
  "cache_write_tokens",
  "used_fallback",
  "estimated",
  "refusal",
]);
const FLOAT = new Set([
  "cost_usd",
  "cost_estimated_usd",
  "ttft_ms",
  "elapsed_ms",
  "tool_latency_ms",
]);
const typed = (columns: readonly string[]) =>
  columns
    .map((column, index) => {
      const type = INTEGER.has(column) ? "::int" : FLOAT.has(column) ? "::float8" : "::text";
      return `$${index + 1}${type}`;
    })
    .join(", ");

export const MESSAGE_COLUMNS = [
  "session_id",
  "turn_index",
  "role",
  "content",
  "name",
  "tool_call_id",
  "tool_calls_json",
  "reasoning",
  "refusal",
  "created_at",
] as const;

export const AUDIT_COLUMNS = [
  "session_id",
  "turn_index",
  "round_index",
  "event",
  "details_json",
  "created_at",
] as const;

const USAGE_READ = `id, ${USAGE_COLUMNS.filter((column) => column !== "session_id").join(", ")}`;
const MESSAGE_READ = `id, session_id, turn_index, role, content, name, tool_call_id,
  tool_calls_json, reasoning, refusal, created_at`;
const TURN_READ =
  "turn_index, user_message, started_at, completed_at, wall_time_ms, status, runner";
const AUDIT_READ = "id, session_id, turn_index, round_index, event, details_json, created_at";
/** A session's token total: the sum of its turns' roll-ups (triggers.ts), not of its calls. */
export const SESSION_TOKENS =
  "(SELECT COALESCE(SUM(total_tokens), 0) FROM turn_usage WHERE session_id = s.id)";

export const SQL = {
  insertSession:
    "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
  selectSession:
    "SELECT id, title, created_at, updated_at, config_json FROM sessions WHERE id = $1",
  // seq, an identity, is never handed out twice: a row inserted again has another.
  selectStoredConfig:
    "SELECT config_json, updated_at, seq AS incarnation FROM sessions WHERE id = $1",
  selectSessionId: "SELECT 1 FROM sessions WHERE id = $1",
  // A batch that writes rows but leaves updated_at (touch_session false): the key-share lock waits
  // for a deleteSession holding the row (FOR UPDATE) and then sees it gone, as the touching UPDATE
  // would; a claim's UPDATE of the row does not conflict with it.
  lockSessionKey: "SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE",
  selectSessionMode: "SELECT mode FROM sessions WHERE id = $1",
  selectSessionsByExperiment: `SELECT id, title, created_at, updated_at, config_json FROM sessions
    WHERE experiment_id = $1 ORDER BY created_at, seq`,
  selectIdsByPrefix: `SELECT id FROM sessions WHERE id LIKE $1 ESCAPE '\\' ORDER BY id LIMIT $2`,
  touchSession: "UPDATE sessions SET updated_at = $1 WHERE id = $2",
  touchSessionOfTurn: `UPDATE sessions SET updated_at = $1 WHERE id = $2
    AND EXISTS (SELECT 1 FROM turns WHERE session_id = $2 AND turn_index = $3)`,
  // The claim's first statement: the row lock every claimer of the session queues on.
  countTurn:
    "UPDATE sessions SET updated_at = $1, turn_count = turn_count + 1 WHERE id = $2 RETURNING id",
  // A claim on the session as its runner last left it (ClaimTurnOptions.expected). A claimer that
  // waited on the row lock reads the row the other one committed, so it finds the session changed.
  countTurnIfUnchanged: `UPDATE sessions SET updated_at = $1, turn_count = turn_count + 1
    WHERE id = $2 AND updated_at = $3 AND seq = $4 RETURNING id`,
  listSessions: `SELECT s.id, s.title, s.created_at, s.updated_at, s.turn_count,
    ${SESSION_TOKENS} AS total_tokens FROM sessions AS s ORDER BY s.updated_at DESC, s.id DESC`,
  listSessionOverviews: `SELECT s.id, s.title, s.created_at, s.updated_at, s.turn_count,
    ${SESSION_TOKENS} AS folded_tokens, s.mode, s.chat_model, s.event_model
    FROM sessions AS s ORDER BY s.updated_at DESC, s.id DESC`,
  insertTurn: `INSERT INTO turns (session_id, turn_index, user_message, started_at, status, runner,
    lease_expires_at)
    VALUES ($1, $2, $3, $4, 'running', $5, clock_timestamp() + $6 * interval '1 millisecond')
    ON CONFLICT (session_id, turn_index) DO NOTHING`,
  listTurns: `SELECT ${TURN_READ} FROM turns WHERE session_id = $1 ORDER BY turn_index`,
  selectTurn: "SELECT 1 FROM turns WHERE session_id = $1 AND turn_index = $2",
  completeTurn: `UPDATE turns SET completed_at = $1, wall_time_ms = $2, status = $3,
    lease_expires_at = NULL WHERE session_id = $4 AND turn_index = $5`,
  runningTurns: `SELECT turn_index, runner, lease_expires_at < clock_timestamp() AS expired,
      (EXTRACT(EPOCH FROM lease_expires_at - clock_timestamp()) * 1000)::float8 AS lease_left_ms
    FROM turns WHERE session_id = $1 AND ${RUNNING_TURN} ORDER BY turn_index`,
  lastTurnIndex: "SELECT COALESCE(MAX(turn_index), 0) AS last FROM turns WHERE session_id = $1",
  insertMessage: `INSERT INTO messages (${MESSAGE_COLUMNS.join(", ")})
    VALUES (${placeholders(MESSAGE_COLUMNS.length)})`,
  listMessages: `SELECT ${MESSAGE_READ} FROM messages WHERE session_id = $1 ORDER BY id`,
  // The EXISTS guard makes "unknown session" cost nothing extra on the common path.
  insertAudit: `INSERT INTO audit_logs (${AUDIT_COLUMNS.join(", ")})
    SELECT ${typed(AUDIT_COLUMNS)}
    WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $1)`,
  insertCheckedAudit: `INSERT INTO audit_logs (${AUDIT_COLUMNS.join(", ")})
    VALUES (${placeholders(AUDIT_COLUMNS.length)})`,
  listAudit: `SELECT ${AUDIT_READ} FROM audit_logs WHERE session_id = $1 ORDER BY id`,
  insertUsage: `INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")})
    SELECT ${typed(USAGE_COLUMNS)}
    WHERE EXISTS (SELECT 1 FROM turns WHERE session_id = $1 AND turn_index = $2)
    ON CONFLICT (session_id, metric_key) DO NOTHING`,
  insertCheckedUsage: `INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")})
    VALUES (${placeholders(USAGE_COLUMNS.length)})
    ON CONFLICT (session_id, metric_key) DO NOTHING`,
  listUsage: `SELECT ${USAGE_READ} FROM usage_stats WHERE session_id = $1 ORDER BY id`,
  pageTurns: `SELECT ${TURN_READ} FROM turns WHERE session_id = $1 AND turn_index > $2
    ORDER BY turn_index LIMIT $3`,
  pageMessages: `SELECT ${MESSAGE_READ} FROM messages WHERE session_id = $1 AND id > $2
    ORDER BY id LIMIT $3`,
  pageAudit: `SELECT ${AUDIT_READ} FROM audit_logs WHERE session_id = $1 AND id > $2
    ORDER BY id LIMIT $3`,
  pageUsage: `SELECT ${USAGE_READ} FROM usage_stats WHERE session_id = $1 AND id > $2
    ORDER BY id LIMIT $3`,
  selectUsageByMetricKey: `SELECT ${USAGE_READ} FROM usage_stats
    WHERE session_id = $1 AND metric_key = $2`,
  turnRollups: `SELECT turn_index, prompt_tokens, completion_tokens, total_tokens, cached_tokens,
    elapsed_ms, call_count, fallback_count, tool_count, estimated_count, reasoning_tokens,
    cache_write_tokens, cost_usd, reported_cost_count, unpriced_count
    FROM turn_usage WHERE session_id = $1 AND ($2::int IS NULL OR turn_index = $2)
    ORDER BY turn_index`,
  wallTimes: `SELECT turn_index, wall_time_ms FROM turns
    WHERE session_id = $1 AND ($2::int IS NULL OR turn_index = $2) ORDER BY turn_index`,
} as const;

export type StatementName = keyof typeof SQL;

/** A named statement with its values, as `pg` runs it (prepared once per connection). */
export function statement(name: StatementName, values: unknown[]): pg.QueryConfig {
  return { name, text: SQL[name], values };
}

/**
 * PostgreSQL text cannot hold U+0000, which SQLite keeps. A model's text may carry one (a JSON
 * `\u0000` in its stream): a turn must not fail for it, so, as lone surrogates are repaired for
 * SQLite (toWellFormedText), it is stored as U+FFFD. JSON columns are unaffected (JSON escapes it).
 */
export function storableText(values: readonly unknown[]): unknown[] {
  return values.map((value) =>
    typeof value === "string" && value.includes("\0") ? value.replaceAll("\0", "\uFFFD") : value,
  );
}

/**
 * Runs a named statement on a pool or a transaction's client. A refusal, or a connection that
 * broke, is a StorageError (a read's too: `serve` reported a restart's raw driver error as one of
 * its own unexpected failures).
 */
export async function run<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  db: pg.Pool | pg.ClientBase,
  name: StatementName,
  values: unknown[],
): Promise<pg.QueryResult<Row>> {
  try {
    return await db.query<Row>(statement(name, storableText(values)));
  } catch (error) {
    throw storageError(error);
  }
}

/** The values of a row's named parameters in `columns` order. */
export function valuesOf(columns: readonly string[], params: Record<string, unknown>): unknown[] {
  return columns.map((column) => params[column]);
}
