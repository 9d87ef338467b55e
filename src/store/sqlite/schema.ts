/**
 * The current layout, as data, so one routine can both create a fresh file and upgrade any legacy
 * layout additively. Column definitions are what `ALTER TABLE ... ADD COLUMN` accepts, which is why
 * added columns that must be NOT NULL carry a default.
 */

/** Bumped whenever the layout changes; a file with a higher `user_version` is refused. */
export const SCHEMA_VERSION = 4;

/** A legacy config that is not JSON belongs to no experiment (json_extract would raise). */
const EXPERIMENT_ID =
  "CASE WHEN json_valid(config_json) THEN json_extract(config_json, '$.experiment.id') END";

export interface TableLayout {
  name: string;
  /** Columns a legacy file may lack, added in order when missing. */
  columns: ReadonlyArray<readonly [name: string, definition: string]>;
  /** The complete statement for a file that lacks the table. */
  create: string;
}

export const TABLES: readonly TableLayout[] = [
  {
    name: "sessions",
    create: `CREATE TABLE IF NOT EXISTS sessions (
      id TEXT PRIMARY KEY,
      title TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      config_json TEXT NOT NULL,
      turn_count INTEGER NOT NULL DEFAULT 0,
      folded_tokens INTEGER NOT NULL DEFAULT 0,
      experiment_id TEXT GENERATED ALWAYS AS (${EXPERIMENT_ID}) VIRTUAL
    )`,
    // Caches for listSessions: turn_count moves with startTurn, folded_tokens with token-fold.ts.
    columns: [
      ["turn_count", "INTEGER NOT NULL DEFAULT 0"],
      ["folded_tokens", "INTEGER NOT NULL DEFAULT 0"],
      // Version 4: read from the config by SQLite itself, so an index can answer the queries that
      // used to parse every config (experiments, filters); nothing in the code maintains it.
      ["experiment_id", `TEXT GENERATED ALWAYS AS (${EXPERIMENT_ID}) VIRTUAL`],
    ],
  },
  {
    name: "turns",
    create: `CREATE TABLE IF NOT EXISTS turns (
      session_id TEXT NOT NULL,
      turn_index INTEGER NOT NULL,
      user_message TEXT NOT NULL,
      started_at TEXT NOT NULL,
      completed_at TEXT,
      wall_time_ms INTEGER,
      status TEXT,
      runner TEXT,
      PRIMARY KEY (session_id, turn_index)
    )`,
    // status: running, completed, cancelled, failed, max_rounds, interrupted (NULL in legacy rows).
    // runner: "pid@host" of the process running the turn, to tell a live turn from a crashed one.
    columns: [
      ["wall_time_ms", "INTEGER"],
      ["status", "TEXT"],
      ["runner", "TEXT"],
    ],
  },
  {
    name: "messages",
    create: `CREATE TABLE IF NOT EXISTS messages (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      turn_index INTEGER NOT NULL,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      name TEXT,
      tool_call_id TEXT,
      created_at TEXT NOT NULL,
      tool_calls_json TEXT NOT NULL DEFAULT '[]',
      reasoning TEXT,
      refusal TEXT
    )`,
    columns: [
      ["tool_calls_json", "TEXT NOT NULL DEFAULT '[]'"],
      // Version 3: an assistant's thinking and refusal text, beside its content.
      ["reasoning", "TEXT"],
      ["refusal", "TEXT"],
    ],
  },
  {
    name: "audit_logs",
    create: `CREATE TABLE IF NOT EXISTS audit_logs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      turn_index INTEGER,
      round_index INTEGER,
      event TEXT NOT NULL,
      details_json TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`,
    columns: [],
  },
  {
    name: "usage_stats",
    create: `CREATE TABLE IF NOT EXISTS usage_stats (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      turn_index INTEGER NOT NULL,
      round_index INTEGER NOT NULL,
      prompt_tokens INTEGER NOT NULL,
      completion_tokens INTEGER NOT NULL,
      total_tokens INTEGER NOT NULL,
      cached_tokens INTEGER NOT NULL,
      ttft_ms INTEGER,
      elapsed_ms INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      agent TEXT NOT NULL DEFAULT 'chat_agent',
      call_kind TEXT NOT NULL DEFAULT 'chat_completion',
      event_id TEXT,
      event_name TEXT,
      used_fallback INTEGER NOT NULL DEFAULT 0,
      tool_latency_ms INTEGER,
      metric_key TEXT,
      estimated INTEGER NOT NULL DEFAULT 0,
      reasoning_tokens INTEGER NOT NULL DEFAULT 0,
      cache_write_tokens INTEGER NOT NULL DEFAULT 0,
      usage_source TEXT,
      cost_usd REAL,
      cost_estimated_usd REAL,
      response_model TEXT,
      response_id TEXT,
      system_fingerprint TEXT,
      finish_reason TEXT,
      refusal INTEGER NOT NULL DEFAULT 0,
      raw_usage_json TEXT
    )`,
    columns: [
      ["agent", "TEXT NOT NULL DEFAULT 'chat_agent'"],
      ["call_kind", "TEXT NOT NULL DEFAULT 'chat_completion'"],
      ["event_id", "TEXT"],
      ["event_name", "TEXT"],
      ["used_fallback", "INTEGER NOT NULL DEFAULT 0"],
      ["tool_latency_ms", "INTEGER"],
      ["metric_key", "TEXT"],
      // Version 2: token counts the lab estimated (no usage reported, or the call was cut short).
      ["estimated", "INTEGER NOT NULL DEFAULT 0"],
      // Version 3: what real providers report beyond the four counts. A legacy row reads 0
      // reasoning and cache writes, no cost, no identity, and usage_source NULL, which means
      // "estimated" when estimated = 1, else "endpoint" (rows.ts).
      ["reasoning_tokens", "INTEGER NOT NULL DEFAULT 0"],
      ["cache_write_tokens", "INTEGER NOT NULL DEFAULT 0"],
      ["usage_source", "TEXT"],
      ["cost_usd", "REAL"],
      ["cost_estimated_usd", "REAL"],
      ["response_model", "TEXT"],
      ["response_id", "TEXT"],
      ["system_fingerprint", "TEXT"],
      ["finish_reason", "TEXT"],
      ["refusal", "INTEGER NOT NULL DEFAULT 0"],
      ["raw_usage_json", "TEXT"],
    ],
  },
  {
    // Version 3: each model call's request body and raw response, compressed (call-payloads.ts),
    // keyed like its usage row. `encoding` names the codec, so a later one can be read beside it.
    name: "call_payloads",
    create: `CREATE TABLE IF NOT EXISTS call_payloads (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      metric_key TEXT NOT NULL,
      turn_index INTEGER NOT NULL,
      round_index INTEGER NOT NULL,
      agent TEXT NOT NULL,
      encoding TEXT NOT NULL,
      request_compressed BLOB NOT NULL,
      response_compressed BLOB NOT NULL,
      request_bytes INTEGER NOT NULL,
      response_bytes INTEGER NOT NULL,
      request_truncated INTEGER NOT NULL,
      response_truncated INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      UNIQUE (session_id, metric_key)
    )`,
    columns: [],
  },
  {
    // The highest usage id folded into sessions.folded_tokens (see token-fold.ts).
    name: "rollup_watermark",
    create: `CREATE TABLE IF NOT EXISTS rollup_watermark (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      usage_id INTEGER NOT NULL
    )`,
    columns: [],
  },
];

export const INDEXES: readonly string[] = [
  "CREATE UNIQUE INDEX IF NOT EXISTS usage_stats_metric_key_uq ON usage_stats (session_id, metric_key)",
  "CREATE INDEX IF NOT EXISTS usage_stats_session_turn ON usage_stats (session_id, turn_index)",
  "CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, id)",
  "CREATE INDEX IF NOT EXISTS audit_logs_session ON audit_logs (session_id, id)",
  "CREATE INDEX IF NOT EXISTS sessions_updated ON sessions (updated_at DESC, id DESC)",
  "CREATE INDEX IF NOT EXISTS sessions_experiment_dates ON sessions (experiment_id, created_at, updated_at)",
  "CREATE INDEX IF NOT EXISTS sessions_experiment ON sessions (experiment_id, created_at)",
];
