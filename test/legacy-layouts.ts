/** The seed's legacy layouts, exactly as the original Python lab wrote them. */
export const LEGACY_MESSAGES = `
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, name TEXT, tool_call_id TEXT, created_at TEXT NOT NULL
  )`;
export const LEGACY_TURNS = `
  CREATE TABLE turns (
    session_id TEXT NOT NULL, turn_index INTEGER NOT NULL, user_message TEXT NOT NULL,
    started_at TEXT NOT NULL, completed_at TEXT, PRIMARY KEY (session_id, turn_index)
  )`;
export const LEGACY_USAGE_WITH_METRIC_KEY = `
  CREATE TABLE usage_stats (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL,
    round_index INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    total_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, ttft_ms INTEGER,
    elapsed_ms INTEGER NOT NULL, metric_key TEXT, created_at TEXT NOT NULL
  )`;
export const INSERT_LEGACY_USAGE = `
  INSERT INTO usage_stats (
    id, session_id, turn_index, round_index, prompt_tokens, completion_tokens, total_tokens,
    cached_tokens, ttft_ms, elapsed_ms, metric_key, created_at
  ) VALUES (?, 'legacy', 1, 1, 0, 0, 0, 0, NULL, 1, ?, 'now')`;

/**
 * A file exactly as schema version 2 left it (the lab of issues 9-10): every table and index, no
 * provider detail, no call_payloads. Version 1 is the same without usage_stats.estimated.
 */
export function layoutOfVersion(version: 1 | 2): string {
  return `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    config_json TEXT NOT NULL, turn_count INTEGER NOT NULL DEFAULT 0,
    folded_tokens INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE turns (
    session_id TEXT NOT NULL, turn_index INTEGER NOT NULL, user_message TEXT NOT NULL,
    started_at TEXT NOT NULL, completed_at TEXT, wall_time_ms INTEGER, status TEXT, runner TEXT,
    PRIMARY KEY (session_id, turn_index)
  );
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, name TEXT, tool_call_id TEXT,
    created_at TEXT NOT NULL, tool_calls_json TEXT NOT NULL DEFAULT '[]'
  );
  CREATE TABLE audit_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER,
    round_index INTEGER, event TEXT NOT NULL, details_json TEXT NOT NULL, created_at TEXT NOT NULL
  );
  CREATE TABLE usage_stats (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL,
    round_index INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    total_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, ttft_ms INTEGER,
    elapsed_ms INTEGER NOT NULL, created_at TEXT NOT NULL,
    agent TEXT NOT NULL DEFAULT 'chat_agent', call_kind TEXT NOT NULL DEFAULT 'chat_completion',
    event_id TEXT, event_name TEXT, used_fallback INTEGER NOT NULL DEFAULT 0,
    tool_latency_ms INTEGER, metric_key TEXT${version === 2 ? ",\n    estimated INTEGER NOT NULL DEFAULT 0" : ""}
  );
  CREATE TABLE rollup_watermark (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1), usage_id INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX usage_stats_metric_key_uq ON usage_stats (session_id, metric_key);
  CREATE INDEX usage_stats_session_turn ON usage_stats (session_id, turn_index);
  CREATE INDEX messages_session ON messages (session_id, id);
  CREATE INDEX audit_logs_session ON audit_logs (session_id, id);
  CREATE INDEX sessions_updated ON sessions (updated_at DESC, id DESC);
  INSERT INTO rollup_watermark (singleton, usage_id) VALUES (1, 0);
  PRAGMA user_version = ${version};
  INSERT INTO sessions (id, title, created_at, updated_at, config_json, turn_count)
    VALUES ('old', 'Old', 'then', 'then', '{"tool_invocation_mode":"chat_agent_tools"}', 1);
  INSERT INTO turns VALUES ('old', 1, 'hello', 'then', 'then', 40, 'completed', '1@h');
  INSERT INTO messages (session_id, turn_index, role, content, name, tool_call_id, created_at)
    VALUES ('old', 1, 'user', 'hello', NULL, NULL, 'then'),
           ('old', 1, 'assistant', 'hi there', NULL, NULL, 'then');
  INSERT INTO usage_stats (session_id, turn_index, round_index, prompt_tokens, completion_tokens,
    total_tokens, cached_tokens, ttft_ms, elapsed_ms, created_at, metric_key${version === 2 ? ", estimated" : ""})
    VALUES ('old', 1, 1, 12, 3, 15, 4, 20, 30, 'then', 'chat:1:1'${version === 2 ? ", 0" : ""}),
           ('old', 1, 2, 9, 2, 11, 0, NULL, 25, 'then', 'chat:1:2'${version === 2 ? ", 1" : ""});`;
}

const ROLLUP_VERSION_1 = {
  prompt_tokens: 20,
  completion_tokens: 5,
  total_tokens: 25,
  cached_tokens: 0,
  elapsed_ms: 400,
  call_count: 1,
  fallback_count: 0,
  tool_count: 0,
  estimated_count: 1,
  turn_wall_time_ms: 1000,
} as const;

/** A session export as version 1 wrote it: no reasoning, refusal or provider detail anywhere. */
export const EXPORT_VERSION_1 = {
  format: "agent-lab.session",
  version: 1,
  exported_at: "2026-11-20T10:00:00.000Z",
  session: {
    id: "old-export",
    title: "Exported before issue 11",
    created_at: "2026-11-20T09:00:00.000Z",
    updated_at: "2026-11-20T09:05:00.000Z",
    tool_invocation_mode: "dual_agent",
    config: { tool_invocation_mode: "dual_agent", chat_agent: { model: "sim" } },
  },
  turns: [
    {
      turn_index: 1,
      user_message: "hello",
      started_at: "2026-11-20T09:00:00.000Z",
      completed_at: "2026-11-20T09:00:01.000Z",
      wall_time_ms: 1000,
      status: "completed",
      runner: "1@host",
    },
  ],
  messages: [
    {
      id: 1,
      session_id: "old-export",
      turn_index: 1,
      role: "user",
      content: "hello",
      name: null,
      tool_call_id: null,
      tool_calls: [],
      created_at: "2026-11-20T09:00:00.000Z",
    },
    {
      id: 2,
      session_id: "old-export",
      turn_index: 1,
      role: "assistant",
      content: "hi",
      name: null,
      tool_call_id: null,
      tool_calls: [],
      created_at: "2026-11-20T09:00:01.000Z",
    },
  ],
  audit: [],
  usage: {
    calls: [
      {
        id: 1,
        turn_index: 1,
        round_index: 1,
        prompt_tokens: 20,
        completion_tokens: 5,
        total_tokens: 25,
        cached_tokens: 0,
        ttft_ms: 50,
        elapsed_ms: 400,
        mode: "dual_agent",
        agent: "chat_agent",
        call_kind: "chat_completion",
        event_id: null,
        event_name: null,
        used_fallback: false,
        tool_latency_ms: null,
        metric_key: "chat:1:1",
        estimated: true,
        created_at: "2026-11-20T09:00:01.000Z",
      },
    ],
    turns: [{ turn_index: 1, ...ROLLUP_VERSION_1 }],
    session: ROLLUP_VERSION_1,
  },
} as const;
