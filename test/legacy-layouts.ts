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
