import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { INDEXES, SCHEMA_VERSION, TABLES } from "../store/sqlite/schema.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { type Clone, cloneSessions } from "./scale-clone.js";
import { TEMPLATE_COUNT, templateShape, writeTemplates } from "./scale-templates.js";

/**
 * The scale benchmark's databases, built fast and kept between runs: the schema comes from opening
 * a `SqliteSessionStore` (the real migrations and indexes), the rows from cloning real template
 * sessions set-based (scale-clone.ts) or from bulk inserts in one transaction. Files are cached
 * under a folder keyed by the schema's text and this generator's version, so changing either
 * rebuilds them; a half-built file never gets its final name.
 */

/** Bump when the generated rows change shape. */
const GENERATOR_VERSION = 1;

export const DEFAULT_CACHE_DIR = join(tmpdir(), "agent-lab-scale-cache");

export function fixtureKey(): string {
  const templates = Array.from({ length: TEMPLATE_COUNT }, (_, index) => templateShape(index));
  const text = JSON.stringify({ SCHEMA_VERSION, TABLES, INDEXES, GENERATOR_VERSION, templates });
  return `v${SCHEMA_VERSION}-${createHash("sha256").update(text).digest("hex").slice(0, 10)}`;
}

export interface Fixture {
  path: string;
  /** Milliseconds spent building it now; null when it came from the cache. */
  built_ms: number | null;
}

/** Builds `name` with `build(partialPath)` unless the cache already has it. */
export async function cached(
  directory: string,
  name: string,
  build: (path: string) => Promise<void> | void,
): Promise<Fixture> {
  const key = fixtureKey();
  const folder = join(directory, key);
  mkdirSync(folder, { recursive: true });
  // Files of an older schema or generator are never read again; they are large.
  for (const entry of readdirSync(directory)) {
    if (entry !== key) rmSync(join(directory, entry), { recursive: true, force: true });
  }
  const path = join(folder, `${name}.sqlite3`);
  if (existsSync(path)) return { path, built_ms: null };
  const partial = `${path}.partial`;
  for (const suffix of ["", "-wal", "-shm"]) rmSync(partial + suffix, { force: true });
  const started = performance.now();
  await build(partial);
  renameSync(partial, path);
  return { path, built_ms: performance.now() - started };
}

/** A raw connection for bulk writes: nothing here needs to survive a crash (the cache rebuilds). */
export function openForBulk(path: string): Database.Database {
  // The store creates the layout first, exactly as the lab would.
  new SqliteSessionStore(path).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  db.pragma("cache_size = -262144");
  return db;
}

/** Closes the bulk connection, then lets the store fold its listing caches as it would. */
export function finish(db: Database.Database, path: string): void {
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  const store = new SqliteSessionStore(path);
  try {
    store.listSessions();
  } finally {
    store.close();
  }
  const reopened = new Database(path);
  reopened.pragma("wal_checkpoint(TRUNCATE)");
  reopened.pragma("journal_mode = DELETE");
  reopened.close();
}

const EPOCH = Date.parse("2026-01-01T00:00:00Z");
const SPAN_MS = 90 * 24 * 3600 * 1000;

async function withTemplates<T>(
  directory: string,
  run: (templateIds: string[], path: string) => T,
): Promise<T> {
  const path = join(directory, fixtureKey(), `templates-${process.pid}.sqlite3`);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  try {
    const ids = await writeTemplates(path);
    return run(ids, path);
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  }
}

/** The id of the `index`th session of a sessions fixture. */
export const scaleSessionId = (index: number) => `s-${String(index).padStart(7, "0")}`;

/**
 * `count` sessions cloned from the templates in turn (session i from template i % 48), created
 * evenly over 90 days; the experiment templates' clones spread over 100 experiment ids.
 */
export async function sessionsFixture(count: number, directory = DEFAULT_CACHE_DIR) {
  return cached(directory, `sessions-${count}`, (path) =>
    withTemplates(directory, (templateIds, templatePath) => {
      const db = openForBulk(path);
      db.prepare("ATTACH DATABASE ? AS tmpl").run(templatePath);
      const clones: Clone[] = [];
      for (let index = 0; index < count; index++) {
        const template = index % TEMPLATE_COUNT;
        const shape = templateShape(template);
        clones.push({
          new_id: scaleSessionId(index),
          template_id: templateIds[template] as string,
          title: `${shape.title} ${index}`,
          created_at: new Date(EPOCH + Math.floor((index * SPAN_MS) / count)).toISOString(),
          experiment_id: shape.experiment
            ? `exp-${String(Math.floor(index / TEMPLATE_COUNT) % 100).padStart(3, "0")}`
            : null,
          repetition: null,
        });
      }
      cloneSessions(db, "tmpl", clones);
      db.exec("DETACH DATABASE tmpl");
      finish(db, path);
    }),
  );
}

/** Calls per turn in the call fixtures: 50 rounds of a chat call, an event-agent call, two tools. */
export const CALLS_PER_TURN = 200;
export const callsSessionId = (calls: number) => `calls-${calls}`;

/**
 * One session per entry of `callCounts`, each with that many usage rows over turns of
 * CALLS_PER_TURN calls (a user and an assistant message per turn), bulk-inserted.
 */
export async function callsFixture(callCounts: readonly number[], directory = DEFAULT_CACHE_DIR) {
  return cached(directory, `calls-${callCounts.join("-")}`, (path) => {
    const store = new SqliteSessionStore(path);
    for (const calls of callCounts) {
      store.createSession({
        title: `A long-running agent, ${calls} calls`,
        session_id: callsSessionId(calls),
        config: { tool_invocation_mode: "dual_agent", tags: ["soak"] },
      });
    }
    store.close();
    const db = openForBulk(path);
    const turn = db.prepare(
      "INSERT INTO turns (session_id, turn_index, user_message, started_at, completed_at, wall_time_ms, status) VALUES (?, ?, 'keep going', ?, ?, 1200, 'completed')",
    );
    const message = db.prepare(
      "INSERT INTO messages (session_id, turn_index, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
    );
    // Set-based: SQLite generates the rows itself, which is several times faster than a JS loop.
    const usage = db.prepare(`
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @calls)
      INSERT INTO usage_stats (session_id, turn_index, round_index, prompt_tokens, completion_tokens,
        total_tokens, cached_tokens, ttft_ms, elapsed_ms, created_at, agent, call_kind, event_id,
        event_name, tool_latency_ms, metric_key, usage_source, cost_estimated_usd, response_model,
        finish_reason)
      SELECT @session, i / ${CALLS_PER_TURN} + 1, (i % ${CALLS_PER_TURN}) / 4 + 1,
        CASE i % 4 WHEN 0 THEN 1200 + i % 97 WHEN 1 THEN 300 ELSE 0 END,
        CASE i % 4 WHEN 0 THEN 80 WHEN 1 THEN 20 ELSE 0 END,
        CASE i % 4 WHEN 0 THEN 1280 + i % 97 WHEN 1 THEN 320 ELSE 0 END,
        CASE i % 4 WHEN 0 THEN 1024 ELSE 0 END,
        CASE WHEN i % 4 < 2 THEN 180 END, CASE WHEN i % 4 < 2 THEN 900 ELSE 40 END,
        strftime('%Y-%m-%dT%H:%M:%fZ', @start + i * 2.0 / 86400.0),
        CASE i % 4 WHEN 0 THEN 'chat_agent' WHEN 1 THEN 'event_agent' ELSE 'event_kernel' END,
        CASE i % 4 WHEN 0 THEN 'chat_completion' WHEN 1 THEN 'argument_fallback' ELSE 'tool_execution' END,
        CASE WHEN i % 4 >= 2 THEN 'evt_' || i END,
        CASE WHEN i % 4 >= 2 THEN 'mock_search' END,
        CASE WHEN i % 4 >= 2 THEN 40 END,
        CASE i % 4 WHEN 0 THEN 'chat:' WHEN 1 THEN 'fallback:' ELSE 'tool:' END || i,
        'endpoint',
        CASE WHEN i % 4 < 2 THEN 0.00021 END,
        CASE WHEN i % 4 < 2 THEN 'gpt-4.1-mini' END,
        CASE WHEN i % 4 < 2 THEN 'stop' END
      FROM n`);
    const start = EPOCH / 86_400_000 + 2440587.5; // julian day of EPOCH
    db.transaction(() => {
      for (const calls of callCounts) {
        const session = callsSessionId(calls);
        const turns = Math.ceil(calls / CALLS_PER_TURN);
        for (let index = 1; index <= turns; index++) {
          const stamp = new Date(EPOCH + index * 400_000).toISOString();
          turn.run(session, index, stamp, stamp);
          message.run(session, index, "user", "keep going", stamp);
          message.run(session, index, "assistant", `Round-up of step ${index}.`, stamp);
        }
        usage.run({ calls, session, start });
        db.prepare("UPDATE sessions SET turn_count = ? WHERE id = ?").run(turns, session);
      }
    })();
    finish(db, path);
  });
}
