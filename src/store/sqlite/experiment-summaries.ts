import type { TableLayout } from "./schema.js";

/**
 * Version 5: each experiment's summary (its session count, first and last `created_at`, latest
 * `updated_at`, the tag of its earliest session), kept as its sessions are written, so the
 * experiment list costs its experiments, not their sessions (a GROUP BY over 100,000 sessions on
 * every `/api/experiments`), and a report's staleness stamp is one primary-key read. SQLite keeps
 * it in the writer's transaction, whoever writes a session (createSession, an import, a delete, an
 * older build's statements); the migration fills it from the sessions themselves.
 *
 * `revision` moves with every write that moves one of its sessions' updated_at (all but a running
 * turn's middle rounds, whose claim moved it). A row whose sessions are all deleted
 * stays, with `sessions = 0`, so its revision never goes back (a cached report keyed by it would
 * otherwise come back to life).
 */

const COLUMNS =
  "id, sessions, first_created_at, last_created_at, last_updated_at, tag_json, revision";

export const EXPERIMENT_SUMMARIES_TABLE: TableLayout = {
  name: "experiment_summaries",
  create: `CREATE TABLE IF NOT EXISTS experiment_summaries (
    id TEXT PRIMARY KEY,
    sessions INTEGER NOT NULL,
    first_created_at TEXT,
    last_created_at TEXT,
    last_updated_at TEXT,
    tag_json TEXT,
    revision INTEGER NOT NULL DEFAULT 0
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS experiment_summaries_latest
    ON experiment_summaries (last_created_at DESC, id)`,
  columns: [],
};

/** A session's experiment tag as JSON text, as the list parses it (NULL for broken config). */
const tagOf = (config: string) =>
  `(CASE WHEN json_valid(${config}) THEN json_extract(${config}, '$.experiment') END)`;

/** The earliest session's tag; the latest `updated_at` (from the indexes, one probe each). */
const earliestTag = (id: string) =>
  `(SELECT ${tagOf("config_json")} FROM sessions WHERE experiment_id = ${id} ORDER BY created_at LIMIT 1)`;
const firstCreated = (id: string) =>
  `(SELECT created_at FROM sessions WHERE experiment_id = ${id} ORDER BY created_at LIMIT 1)`;
const lastCreated = (id: string) =>
  `(SELECT created_at FROM sessions WHERE experiment_id = ${id} ORDER BY created_at DESC LIMIT 1)`;
const lastUpdated = (id: string) =>
  `(SELECT updated_at FROM sessions WHERE experiment_id = ${id} ORDER BY updated_at DESC LIMIT 1)`;

/** Session `row` joins its experiment. */
const ADD = (row: string) => `
  INSERT INTO experiment_summaries (${COLUMNS})
  VALUES (${row}.experiment_id, 1, ${row}.created_at, ${row}.created_at, ${row}.updated_at,
    ${tagOf(`${row}.config_json`)}, 1)
  ON CONFLICT (id) DO UPDATE SET
    sessions = sessions + 1,
    revision = revision + 1,
    tag_json = CASE WHEN first_created_at IS NULL OR excluded.first_created_at < first_created_at
      THEN excluded.tag_json ELSE tag_json END,
    first_created_at = CASE WHEN first_created_at IS NULL OR excluded.first_created_at < first_created_at
      THEN excluded.first_created_at ELSE first_created_at END,
    last_created_at = CASE WHEN last_created_at IS NULL OR excluded.last_created_at > last_created_at
      THEN excluded.last_created_at ELSE last_created_at END,
    last_updated_at = CASE WHEN last_updated_at IS NULL OR excluded.last_updated_at > last_updated_at
      THEN excluded.last_updated_at ELSE last_updated_at END`;

/**
 * Session `row` (already gone) leaves its experiment: a bound it held is read again from the
 * indexes, one probe each, so deleting a whole experiment stays linear.
 */
const REMOVE = (row: string) => `
  UPDATE experiment_summaries SET
    sessions = sessions - 1,
    revision = revision + 1,
    tag_json = CASE WHEN ${row}.created_at > first_created_at THEN tag_json
      ELSE ${earliestTag(`${row}.experiment_id`)} END,
    first_created_at = CASE WHEN ${row}.created_at > first_created_at THEN first_created_at
      ELSE ${firstCreated(`${row}.experiment_id`)} END,
    last_created_at = CASE WHEN ${row}.created_at < last_created_at THEN last_created_at
      ELSE ${lastCreated(`${row}.experiment_id`)} END,
    last_updated_at = CASE WHEN ${row}.updated_at < last_updated_at THEN last_updated_at
      ELSE ${lastUpdated(`${row}.experiment_id`)} END
  WHERE id = ${row}.experiment_id`;

/** Experiment `id` summed again from its sessions (a rare change of a session's tag or dates). */
const REFRESH = (id: string) => `
  INSERT INTO experiment_summaries (${COLUMNS})
  SELECT ${id}, count(*), min(created_at), max(created_at), max(updated_at), ${earliestTag(id)}, 1
  FROM sessions WHERE experiment_id = ${id} AND ${id} IS NOT NULL
  GROUP BY experiment_id
  ON CONFLICT (id) DO UPDATE SET
    sessions = excluded.sessions, first_created_at = excluded.first_created_at,
    last_created_at = excluded.last_created_at, last_updated_at = excluded.last_updated_at,
    tag_json = excluded.tag_json, revision = revision + 1`;

/**
 * A session's config or creation date changed (no store method does; another writer may): its
 * experiments are summed again. Compared as text, so the hot path parses no JSON for it.
 */
const RESHAPED = "(OLD.config_json IS NOT NEW.config_json OR OLD.created_at IS NOT NEW.created_at)";

export const EXPERIMENT_SUMMARY_TRIGGERS: readonly string[] = [
  `CREATE TRIGGER IF NOT EXISTS sessions_experiment_insert AFTER INSERT ON sessions
  WHEN NEW.experiment_id IS NOT NULL BEGIN
    ${ADD("NEW")};
  END`,
  `CREATE TRIGGER IF NOT EXISTS sessions_experiment_delete AFTER DELETE ON sessions
  WHEN OLD.experiment_id IS NOT NULL BEGIN
    ${REMOVE("OLD")};
  END`,
  // The hot path: every write to a session moves its updated_at (a running turn's middle rounds
  // excepted: its claim and its end do).
  `CREATE TRIGGER IF NOT EXISTS sessions_experiment_touch AFTER UPDATE OF updated_at ON sessions
  WHEN NEW.experiment_id IS NOT NULL AND NOT ${RESHAPED} BEGIN
    UPDATE experiment_summaries SET
      revision = revision + 1,
      last_updated_at = CASE WHEN NEW.updated_at >= last_updated_at THEN NEW.updated_at
        WHEN OLD.updated_at < last_updated_at THEN last_updated_at
        ELSE ${lastUpdated("NEW.experiment_id")} END
    WHERE id = NEW.experiment_id;
  END`,
  `CREATE TRIGGER IF NOT EXISTS sessions_experiment_reshape
  AFTER UPDATE OF config_json, created_at ON sessions WHEN ${RESHAPED} BEGIN
    UPDATE experiment_summaries SET sessions = 0, first_created_at = NULL, last_created_at = NULL,
      last_updated_at = NULL, tag_json = NULL, revision = revision + 1
    WHERE id = OLD.experiment_id;
    ${REFRESH("OLD.experiment_id")};
    ${REFRESH("NEW.experiment_id")};
  END`,
];

/** Fills the table from the sessions themselves (an upgrade to version 5). */
export const REBUILD_EXPERIMENT_SUMMARIES: readonly string[] = [
  "DELETE FROM experiment_summaries",
  `INSERT INTO experiment_summaries (${COLUMNS})
    SELECT experiment_id, count(*), min(created_at), max(created_at), max(updated_at),
      ${earliestTag("outer_sessions.experiment_id")}, 1
    FROM sessions AS outer_sessions WHERE experiment_id IS NOT NULL GROUP BY experiment_id`,
];
