import type Database from "better-sqlite3";
import { NEW_INCARNATION } from "./schema.js";

/**
 * The columns of a usage row as written (rows.ts toUsageRowParams binds each by name).
 */
export const USAGE_COLUMNS = [
  "session_id",
  "turn_index",
  "round_index",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "cached_tokens",
  "reasoning_tokens",
  "cache_write_tokens",
  "ttft_ms",
  "elapsed_ms",
  "created_at",
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
  "raw_usage_json",
] as const;

/** Every statement the store runs, prepared once per connection by `prepareStatements`. */
export const SQL = {
  insertSession: `INSERT INTO sessions (id, title, created_at, updated_at, config_json, incarnation)
    VALUES (?, ?, ?, ?, ?, ${NEW_INCARNATION})`,
  selectSession: "SELECT id, title, created_at, updated_at, config_json FROM sessions WHERE id = ?",
  selectStoredConfig: "SELECT config_json, updated_at, incarnation FROM sessions WHERE id = ?",
  selectSessionId: "SELECT 1 FROM sessions WHERE id = ?",
  selectSessionsByExperiment: `
      SELECT id, title, created_at, updated_at, config_json FROM sessions
      WHERE experiment_id = ? ORDER BY created_at, rowid`,
  touchSession: "UPDATE sessions SET updated_at = ? WHERE id = ?",
  // A round's batch names one turn: the session's touch and the turn's check in one statement.
  touchSessionOfTurn: `
      UPDATE sessions SET updated_at = ? WHERE id = ?
        AND EXISTS (SELECT 1 FROM turns WHERE session_id = ? AND turn_index = ?)`,
  countTurn: "UPDATE sessions SET updated_at = ?, turn_count = turn_count + 1 WHERE id = ?",
  // A claim on the session as its runner last left it (ClaimTurnOptions.expected).
  countTurnIfUnchanged: `
      UPDATE sessions SET updated_at = ?, turn_count = turn_count + 1
      WHERE id = ? AND updated_at = ? AND incarnation = ?`,
  // The whole list as one JSON text of rows as arrays, built by SQLite and parsed by V8 at once,
  // read from the covering index `sessions_listed` without touching the table (`npm run bench --
  // pg`, 100,000 sessions: 125 ms as objects from the table, 207 ms as rows through the driver).
  // The subquery's order is the array's (an ORDER BY inside the aggregate would sort instead).
  // PostgreSQL's json_agg was slower than its rows.
  listSessions: `
      SELECT json_group_array(json_array(id, title, created_at, updated_at, turn_count,
        folded_tokens))
      FROM (SELECT id, title, created_at, updated_at, turn_count, folded_tokens
        FROM sessions ORDER BY updated_at DESC, id DESC)`,
  // The config fields a session list shows, read in SQL so no config is parsed in JS. A config
  // without an event agent uses the chat agent's model for it (LabSessionConfig's rule).
  listSessionOverviews: `
      SELECT id, title, created_at, updated_at, turn_count, folded_tokens,
        CASE WHEN json_valid(config_json) THEN json_extract(config_json, '$.tool_invocation_mode') END AS mode,
        CASE WHEN json_valid(config_json) THEN json_extract(config_json, '$.chat_agent.model') END AS chat_model,
        CASE WHEN json_valid(config_json) THEN
          CASE WHEN json_type(config_json, '$.event_agent') IS NULL
            THEN json_extract(config_json, '$.chat_agent.model')
            ELSE json_extract(config_json, '$.event_agent.model') END
        END AS event_model
      FROM sessions ORDER BY updated_at DESC, id DESC`,
  insertTurn:
    "INSERT INTO turns (session_id, turn_index, user_message, started_at, status, runner) VALUES (?, ?, ?, ?, 'running', ?)",
  listTurns: `
      SELECT turn_index, user_message, started_at, completed_at, wall_time_ms, status, runner
      FROM turns WHERE session_id = ? ORDER BY turn_index`,
  selectTurn: "SELECT 1 FROM turns WHERE session_id = ? AND turn_index = ?",
  // A middle round's check, in one statement: its turn exists, and so does its session.
  selectTurnOfSession: `
      SELECT 1 FROM turns WHERE session_id = ? AND turn_index = ?
        AND EXISTS (SELECT 1 FROM sessions WHERE id = ?)`,
  completeTurn:
    "UPDATE turns SET completed_at = ?, wall_time_ms = ?, status = ? WHERE session_id = ? AND turn_index = ?",
  insertMessage: `
      INSERT INTO messages (session_id, turn_index, role, content, name, tool_call_id, tool_calls_json,
        reasoning, refusal, created_at)
      VALUES (@session_id, @turn_index, @role, @content, @name, @tool_call_id, @tool_calls_json,
        @reasoning, @refusal, @created_at)`,
  listMessages: `
      SELECT id, session_id, turn_index, role, content, name, tool_call_id, tool_calls_json,
             reasoning, refusal, created_at
      FROM messages WHERE session_id = ? ORDER BY id`,
  // The EXISTS guard makes "unknown session" cost nothing extra on the common path.
  insertAudit: `
      INSERT INTO audit_logs (session_id, turn_index, round_index, event, details_json, created_at)
      SELECT @session_id, @turn_index, @round_index, @event, @details_json, @created_at
      WHERE EXISTS (SELECT 1 FROM sessions WHERE id = @session_id)`,
  // For writers that checked the session (and the turns) once up front: no guard per row.
  insertCheckedAudit: `
      INSERT INTO audit_logs (session_id, turn_index, round_index, event, details_json, created_at)
      VALUES (@session_id, @turn_index, @round_index, @event, @details_json, @created_at)`,
  listAudit: `
      SELECT id, session_id, turn_index, round_index, event, details_json, created_at
      FROM audit_logs WHERE session_id = ? ORDER BY id`,
  insertUsage: `
      INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")})
      SELECT ${USAGE_COLUMNS.map((column) => `@${column}`).join(", ")}
      WHERE EXISTS (SELECT 1 FROM turns WHERE session_id = @session_id AND turn_index = @turn_index)
      ON CONFLICT (session_id, metric_key) DO NOTHING`,
  // Bound by position, in USAGE_COLUMNS order (record-batch.ts usageRowValues): a round writes
  // a row per call, and binding its 29 values by name cost over a quarter of the insert.
  insertCheckedUsage: `
      INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")})
      VALUES (${USAGE_COLUMNS.map(() => "?").join(", ")})
      ON CONFLICT (session_id, metric_key) DO NOTHING`,
  listUsage: `
      SELECT id, ${USAGE_COLUMNS.filter((column) => column !== "session_id").join(", ")}
      FROM usage_stats WHERE session_id = ? ORDER BY id`,
  // Keyset pages (session-pages.ts): the rows after the cursor's key, one more than the limit so
  // the page knows whether another follows. Each is a range of a (session_id, key) index.
  selectSessionMode: "SELECT mode FROM sessions WHERE id = ?",
  pageTurns: `
      SELECT turn_index, user_message, started_at, completed_at, wall_time_ms, status, runner
      FROM turns WHERE session_id = ? AND turn_index > ? ORDER BY turn_index LIMIT ?`,
  pageMessages: `
      SELECT id, session_id, turn_index, role, content, name, tool_call_id, tool_calls_json,
             reasoning, refusal, created_at
      FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?`,
  pageAudit: `
      SELECT id, session_id, turn_index, round_index, event, details_json, created_at
      FROM audit_logs WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?`,
  pageUsage: `
      SELECT id, ${USAGE_COLUMNS.filter((column) => column !== "session_id").join(", ")}
      FROM usage_stats WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?`,
  // One call by its metric key: the unique (session_id, metric_key) index, not the session's calls.
  selectUsageByMetricKey: `
      SELECT id, ${USAGE_COLUMNS.filter((column) => column !== "session_id").join(", ")}
      FROM usage_stats WHERE session_id = ? AND metric_key = ?`,
} as const;

export type Statements = { readonly [Name in keyof typeof SQL]: Database.Statement };

export function prepareStatements(db: Database.Database): Statements {
  return Object.fromEntries(
    Object.entries(SQL).map(([name, text]) => [name, db.prepare(text)]),
  ) as unknown as Statements;
}
