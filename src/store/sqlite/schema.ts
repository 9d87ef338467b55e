import { EXPERIMENT_SUMMARIES_TABLE, EXPERIMENT_SUMMARY_TRIGGERS } from "./experiment-summaries.js";
import { TURN_USAGE_TABLE, TURN_USAGE_TRIGGER } from "./turn-usage.js";

/**
 * The current layout, as data, so one routine can both create a fresh file and upgrade any legacy
 * layout additively. Column definitions are what `ALTER TABLE ... ADD COLUMN` accepts, which is why
 * added columns that must be NOT NULL carry a default.
 */

/** A session row's `incarnation`: random, within a JS number's exact integers. */
export const NEW_INCARNATION = "(random() % 9007199254740991)";

/** Bumped whenever the layout changes; a file with a higher `user_version` is refused. */
export const SCHEMA_VERSION = 7;

/** A legacy config that is not JSON belongs to no experiment (json_extract would raise). */
const EXPERIMENT_ID =
  "CASE WHEN json_valid(config_json) THEN json_extract(config_json, '$.experiment.id') END";

/** A config field read only when the config is JSON (json_extract raises on a legacy non-JSON one). */
const field = (path: string) =>
  `CASE WHEN json_valid(config_json) THEN json_extract(config_json, '${path}') END`;

/**
 * Version 4, the list filters. Each reads what `toSessionOverview` shows, normalized as it
 * normalizes (modeOf: an unknown or absent mode is dual_agent; modelString: an absent or empty
 * model is sim), so `mode = ?` finds exactly the sessions the list labels with that mode. A config
 * without an event agent uses the chat agent's model for it (LabSessionConfig's rule).
 */
const MODE = `CASE WHEN ${field("$.tool_invocation_mode")} IN ('chat_agent_tools', 'dual_agent')
  THEN ${field("$.tool_invocation_mode")} ELSE 'dual_agent' END`;
const modelOf = (expression: string) =>
  `CASE WHEN typeof(${expression}) = 'text' AND ${expression} <> '' THEN ${expression} ELSE 'sim' END`;
const EVENT_MODEL_RAW = `CASE WHEN json_valid(config_json) THEN
  CASE WHEN json_type(config_json, '$.event_agent') IS NULL
    THEN json_extract(config_json, '$.chat_agent.model')
    ELSE json_extract(config_json, '$.event_agent.model') END END`;
const CHAT_MODEL = modelOf(field("$.chat_agent.model"));
const EVENT_MODEL = modelOf(`(${EVENT_MODEL_RAW})`);

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
      experiment_id TEXT GENERATED ALWAYS AS (${EXPERIMENT_ID}) VIRTUAL,
      mode TEXT GENERATED ALWAYS AS (${MODE}) VIRTUAL,
      chat_model TEXT GENERATED ALWAYS AS (${CHAT_MODEL}) VIRTUAL,
      event_model TEXT GENERATED ALWAYS AS (${EVENT_MODEL}) VIRTUAL,
      last_status TEXT
    )`,
    // Caches for listSessions: turn_count moves with startTurn, folded_tokens with token-fold.ts.
    columns: [
      ["turn_count", "INTEGER NOT NULL DEFAULT 0"],
      ["folded_tokens", "INTEGER NOT NULL DEFAULT 0"],
      // Version 4: read from the config by SQLite itself, so an index can answer the queries that
      // used to parse every config (experiments, filters); nothing in the code maintains it.
      ["experiment_id", `TEXT GENERATED ALWAYS AS (${EXPERIMENT_ID}) VIRTUAL`],
      // Version 4, the list filters: the config's mode and models as the list shows them, and the
      // latest turn's status (kept by the triggers below, backfilled by migrate.ts).
      ["mode", `TEXT GENERATED ALWAYS AS (${MODE}) VIRTUAL`],
      ["chat_model", `TEXT GENERATED ALWAYS AS (${CHAT_MODEL}) VIRTUAL`],
      ["event_model", `TEXT GENERATED ALWAYS AS (${EVENT_MODEL}) VIRTUAL`],
      ["last_status", "TEXT"],
      // Version 7: StoredSessionConfig.incarnation, drawn anew whenever the row is inserted.
      ["incarnation", "INTEGER NOT NULL DEFAULT 0"],
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
    // Version 4: the config's `tags`, one row each, with a copy of the session's updated_at, so
    // the tag filter reads a tag's sessions in list order from one index (no sort of all of them).
    // Kept by the triggers below from sessions; nothing in the code writes it.
    name: "session_tags",
    create: `CREATE TABLE IF NOT EXISTS session_tags (
      tag TEXT NOT NULL,
      session_id TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (tag, session_id)
    ) WITHOUT ROWID`,
    columns: [],
  },
  {
    // Version 4: the title search, a trigram index over the titles (kept by the triggers below),
    // so a substring of 3 or more characters is found without reading every title. Its rows are
    // keyed by session_search.key, not by sessions.rowid: VACUUM may renumber the rowids of a
    // table whose key is not an INTEGER PRIMARY KEY, which would silently detach the index.
    name: "session_search",
    create: `CREATE TABLE IF NOT EXISTS session_search (
      key INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL UNIQUE
    )`,
    columns: [],
  },
  {
    name: "sessions_fts",
    create: "CREATE VIRTUAL TABLE IF NOT EXISTS sessions_fts USING fts5(title, tokenize='trigram')",
    columns: [],
  },
  TURN_USAGE_TABLE,
  EXPERIMENT_SUMMARIES_TABLE,
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

/**
 * A turn still running as toTurnRecord reads it (legacy rows without a status: while they have no
 * completion time). turn-claim.ts's query repeats it word for word, so SQLite uses the index.
 */
export const RUNNING_TURN = "(status = 'running' OR (status IS NULL AND completed_at IS NULL))";

export const INDEXES: readonly string[] = [
  "CREATE UNIQUE INDEX IF NOT EXISTS usage_stats_metric_key_uq ON usage_stats (session_id, metric_key)",
  "CREATE INDEX IF NOT EXISTS usage_stats_session_turn ON usage_stats (session_id, turn_index)",
  // The calls page walks a session's calls in id order; without it every page sorts them all.
  "CREATE INDEX IF NOT EXISTS usage_stats_session_id ON usage_stats (session_id, id)",
  "CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, id)",
  "CREATE INDEX IF NOT EXISTS audit_logs_session ON audit_logs (session_id, id)",
  // Version 7: the list order, covering what listSessions reads (replaces sessions_updated, the
  // order alone): the whole list is read from the index, not from rows holding their configs.
  "DROP INDEX IF EXISTS sessions_updated",
  `CREATE INDEX IF NOT EXISTS sessions_listed
    ON sessions (updated_at DESC, id DESC, title, created_at, turn_count, folded_tokens)`,
  "CREATE INDEX IF NOT EXISTS sessions_experiment_dates ON sessions (experiment_id, created_at, updated_at)",
  "CREATE INDEX IF NOT EXISTS sessions_experiment ON sessions (experiment_id, created_at)",
  // Version 4: each filter of the paged list reads its rows in list order from one index.
  "CREATE INDEX IF NOT EXISTS sessions_mode_updated ON sessions (mode, updated_at DESC, id DESC)",
  "CREATE INDEX IF NOT EXISTS sessions_chat_model_updated ON sessions (chat_model, updated_at DESC, id DESC)",
  "CREATE INDEX IF NOT EXISTS sessions_event_model_updated ON sessions (event_model, updated_at DESC, id DESC)",
  "CREATE INDEX IF NOT EXISTS sessions_status_updated ON sessions (last_status, updated_at DESC, id DESC)",
  "CREATE INDEX IF NOT EXISTS sessions_experiment_updated ON sessions (experiment_id, updated_at DESC, id DESC)",
  "CREATE INDEX IF NOT EXISTS session_tags_session ON session_tags (session_id)",
  "CREATE INDEX IF NOT EXISTS session_tags_updated ON session_tags (tag, updated_at DESC, session_id DESC)",
  // Version 6: a session's running turns (one at most, in practice) without reading its finished
  // ones; every claim asks, and a 1,000-turn session made that a scan of 1,000 rows.
  `CREATE INDEX IF NOT EXISTS turns_running ON turns (session_id, turn_index) WHERE ${RUNNING_TURN}`,
];

/** A turn's status as toTurnRecord reads it: legacy rows without one tell by their completion. */
const TURN_STATUS =
  "COALESCE(status, CASE WHEN completed_at IS NULL THEN 'running' ELSE 'completed' END)";

/** sessions.last_status of session `id`: its latest turn's status, NULL without turns. */
export const LAST_STATUS_OF = (id: string) =>
  `(SELECT ${TURN_STATUS} FROM turns WHERE session_id = ${id} ORDER BY turn_index DESC LIMIT 1)`;

const TAGS_OF = (row: string) => `
  INSERT OR IGNORE INTO session_tags (tag, session_id, updated_at)
  SELECT value, ${row}.id, ${row}.updated_at FROM json_each(COALESCE(CASE WHEN json_valid(${row}.config_json) THEN
    CASE WHEN json_type(${row}.config_json, '$.tags') = 'array'
      THEN json_extract(${row}.config_json, '$.tags') END END, '[]'))
  WHERE type = 'text'`;

const SEARCH_OF = (row: string) => `
  INSERT INTO session_search (session_id) VALUES (${row}.id);
  INSERT INTO sessions_fts (rowid, title)
  SELECT key, ${row}.title FROM session_search WHERE session_id = ${row}.id`;

const UNSEARCH_OF = (row: string) => `
  DELETE FROM sessions_fts WHERE rowid = (SELECT key FROM session_search WHERE session_id = ${row}.id);
  DELETE FROM session_search WHERE session_id = ${row}.id`;

/** Fills the version-4 tables for sessions written before them (migrate.ts; idempotent). */
export const BACKFILL: readonly string[] = [
  `UPDATE sessions SET last_status = ${LAST_STATUS_OF("sessions.id")}`,
  TAGS_OF("sessions").replace("FROM json_each", "FROM sessions, json_each"),
  `INSERT OR IGNORE INTO session_search (session_id) SELECT id FROM sessions`,
  "DELETE FROM sessions_fts",
  `INSERT INTO sessions_fts (rowid, title)
    SELECT key, title FROM session_search JOIN sessions ON sessions.id = session_search.session_id`,
];

/**
 * Version 4: what keeps the filter columns right whoever writes (startTurn, claimTurn,
 * completeTurn, an import, an interrupted turn, another process on an older build's statements):
 * SQLite itself, in the writer's transaction. Each costs one primary-key lookup per written row.
 */
export const TRIGGERS: readonly string[] = [
  TURN_USAGE_TRIGGER,
  ...EXPERIMENT_SUMMARY_TRIGGERS,
  `CREATE TRIGGER IF NOT EXISTS turns_last_status_insert AFTER INSERT ON turns BEGIN
    UPDATE sessions SET last_status = ${LAST_STATUS_OF("NEW.session_id")} WHERE id = NEW.session_id;
  END`,
  `CREATE TRIGGER IF NOT EXISTS turns_last_status_update AFTER UPDATE OF status, completed_at ON turns BEGIN
    UPDATE sessions SET last_status = ${LAST_STATUS_OF("NEW.session_id")} WHERE id = NEW.session_id;
  END`,
  `CREATE TRIGGER IF NOT EXISTS turns_last_status_delete AFTER DELETE ON turns BEGIN
    UPDATE sessions SET last_status = ${LAST_STATUS_OF("OLD.session_id")} WHERE id = OLD.session_id;
  END`,
  `CREATE TRIGGER IF NOT EXISTS sessions_index_insert AFTER INSERT ON sessions BEGIN
    ${TAGS_OF("NEW")};
    ${SEARCH_OF("NEW")};
  END`,
  `CREATE TRIGGER IF NOT EXISTS sessions_index_delete AFTER DELETE ON sessions BEGIN
    DELETE FROM session_tags WHERE session_id = OLD.id;
    ${UNSEARCH_OF("OLD")};
  END`,
  // Every write to a session moves its updated_at; an untagged session costs one index probe.
  `CREATE TRIGGER IF NOT EXISTS sessions_tags_touch AFTER UPDATE OF updated_at ON sessions BEGIN
    UPDATE session_tags SET updated_at = NEW.updated_at WHERE session_id = NEW.id;
  END`,
  `CREATE TRIGGER IF NOT EXISTS sessions_index_update AFTER UPDATE OF title, config_json ON sessions BEGIN
    DELETE FROM session_tags WHERE session_id = OLD.id;
    ${TAGS_OF("NEW")};
    ${UNSEARCH_OF("OLD")};
    ${SEARCH_OF("NEW")};
  END`,
];
