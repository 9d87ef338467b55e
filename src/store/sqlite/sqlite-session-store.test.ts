import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  INSERT_LEGACY_USAGE,
  LEGACY_MESSAGES,
  LEGACY_TURNS,
  LEGACY_USAGE_WITH_METRIC_KEY,
  layoutOfVersion,
} from "../../../test/legacy-layouts.js";
import { temporaryDirectory } from "../../../test/paths.js";
import { DatabaseOpenError, SchemaTooNewError } from "../../domain/errors.js";
import { describeSessionStoreContract } from "../session-store.contract.js";
import { SCHEMA_VERSION } from "./schema.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { FOLD_THRESHOLD } from "./token-fold.js";

describeSessionStoreContract("SqliteSessionStore", () => {
  const directory = temporaryDirectory();
  const path = join(directory.path, "agent_lab.sqlite3");
  return {
    store: new SqliteSessionStore(path),
    rejectToolMessages: () => {
      // The seed's fault injection: a second connection adds a trigger behind the store's back.
      const connection = new Database(path);
      connection.exec(`
        CREATE TRIGGER reject_tool_message BEFORE INSERT ON messages WHEN NEW.role = 'tool'
        BEGIN SELECT RAISE(ABORT, 'tool blocked'); END`);
      connection.close();
    },
    cleanup: directory.remove,
  };
});

function columnNames(connection: Database.Database, table: string): string[] {
  return (connection.pragma(`table_info(${table})`) as { name: string }[]).map((row) => row.name);
}

function indexNames(connection: Database.Database, table: string): string[] {
  return (connection.pragma(`index_list(${table})`) as { name: string }[]).map((row) => row.name);
}

describe("SqliteSessionStore: legacy files and the file itself", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it("migrates legacy usage and turn metrics additively (seed: test_sqlite_store_migrates_legacy_usage_and_turn_metrics_additively)", () => {
    const databasePath = join(directory.path, "legacy-usage.sqlite3");
    const connection = new Database(databasePath);
    connection.exec(`
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL, config_json TEXT NOT NULL
      );
      ${LEGACY_TURNS};
      CREATE TABLE usage_stats (
        id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL,
        round_index INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL, total_tokens INTEGER NOT NULL,
        cached_tokens INTEGER NOT NULL, ttft_ms INTEGER, elapsed_ms INTEGER NOT NULL,
        created_at TEXT NOT NULL
      );
      INSERT INTO sessions VALUES (
        'legacy', 'Legacy', 'now', 'now', '{"tool_invocation_mode":"chat_agent_tools"}'
      );
      INSERT INTO turns VALUES ('legacy', 1, 'old', 'now', 'now');
      INSERT INTO usage_stats (
        session_id, turn_index, round_index, prompt_tokens, completion_tokens, total_tokens,
        cached_tokens, ttft_ms, elapsed_ms, created_at
      ) VALUES ('legacy', 1, 1, 1, 2, 3, 0, 4, 5, 'now');
    `);
    connection.close();

    const store = new SqliteSessionStore(databasePath);
    const usage = store.usageSummary("legacy");
    store.close();
    expect(usage.calls[0]?.agent).toBe("chat_agent");
    expect(usage.calls[0]?.call_kind).toBe("chat_completion");
    expect(usage.calls[0]?.mode).toBe("chat_agent_tools");
    expect(usage.calls[0]?.used_fallback).toBe(false);
    expect(usage.turns[0]?.turn_wall_time_ms).toBeNull();

    const migrated = new Database(databasePath);
    const usageColumns = new Set(columnNames(migrated, "usage_stats"));
    const turnColumns = new Set(columnNames(migrated, "turns"));
    const indexes = new Set(indexNames(migrated, "usage_stats"));
    const metricIndexSql = (
      migrated
        .prepare("SELECT sql FROM sqlite_master WHERE name = 'usage_stats_metric_key_uq'")
        .get() as { sql: string }
    ).sql;
    migrated.close();
    for (const column of [
      "agent",
      "call_kind",
      "event_id",
      "event_name",
      "used_fallback",
      "tool_latency_ms",
      "metric_key",
    ]) {
      expect(usageColumns.has(column), column).toBe(true);
    }
    expect(turnColumns.has("wall_time_ms")).toBe(true);
    expect(indexes.has("usage_stats_metric_key_uq")).toBe(true);
    expect(metricIndexSql).toContain("session_id, metric_key");
  });

  it("deduplicates metric keys before creating the unique index (seed: test_sqlite_store_deduplicates_metric_keys_before_creating_unique_index)", () => {
    const databasePath = join(directory.path, "duplicate-metric-keys.sqlite3");
    const connection = new Database(databasePath);
    connection.exec(LEGACY_USAGE_WITH_METRIC_KEY);
    const insert = connection.prepare(INSERT_LEGACY_USAGE);
    for (const [id, key] of [
      [7, "chat:1:1"],
      [11, "chat:1:1"],
      [13, null],
      [17, null],
      [19, null],
    ] as const) {
      insert.run(id, key);
    }
    connection.close();

    const store = new SqliteSessionStore(databasePath);
    store.listSessions();
    store.close();

    const migrated = new Database(databasePath);
    const rows = migrated
      .prepare("SELECT id, session_id, metric_key FROM usage_stats ORDER BY id")
      .raw()
      .all();
    const indexes = indexNames(migrated, "usage_stats");
    migrated.close();
    expect(rows).toStrictEqual([
      [7, "legacy", "chat:1:1"],
      [13, "legacy", null],
      [17, "legacy", null],
      [19, "legacy", null],
    ]);
    expect(indexes.filter((name) => name === "usage_stats_metric_key_uq")).toHaveLength(1);
  });

  it("migrates legacy messages with empty tool calls (seed: test_sqlite_store_migrates_legacy_messages_with_empty_tool_calls)", () => {
    const databasePath = join(directory.path, "legacy.sqlite3");
    const connection = new Database(databasePath);
    connection.exec(LEGACY_MESSAGES);
    connection.exec(`
      INSERT INTO messages (session_id, turn_index, role, content, name, tool_call_id, created_at)
      VALUES ('legacy', 1, 'assistant', 'old answer', NULL, NULL, 'now')`);
    connection.close();

    const store = new SqliteSessionStore(databasePath);
    expect(store.listMessages("legacy")[0]?.tool_calls).toStrictEqual([]);
    store.close();

    const migrated = new Database(databasePath);
    const columns = migrated.pragma("table_info(messages)") as {
      name: string;
      notnull: number;
      dflt_value: string | null;
    }[];
    migrated.close();
    const toolCallsColumn = columns.find((column) => column.name === "tool_calls_json");
    expect(toolCallsColumn?.notnull).toBe(1);
    expect(toolCallsColumn?.dflt_value).toBe("'[]'");
  });

  it("opens an up-to-date file again without changing it, and records the schema version", () => {
    const databasePath = join(directory.path, "current.sqlite3");
    const first = new SqliteSessionStore(databasePath);
    first.createSession({ title: "kept", config: {}, session_id: "kept" });
    first.close();
    const second = new SqliteSessionStore(databasePath);
    expect(second.getSession("kept")?.title).toBe("kept");
    second.close();
    const connection = new Database(databasePath);
    expect(connection.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(connection.pragma("journal_mode", { simple: true })).toBe("wal");
    connection.close();
  });

  it("refuses a file written by a newer schema version and leaves it untouched", () => {
    const databasePath = join(directory.path, "future.sqlite3");
    const connection = new Database(databasePath);
    connection.exec("CREATE TABLE sessions (id TEXT PRIMARY KEY, shape_from_the_future BLOB)");
    connection.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    connection.close();
    const before = readFileSync(databasePath);

    expect(() => new SqliteSessionStore(databasePath)).toThrow(SchemaTooNewError);
    expect(() => new SqliteSessionStore(databasePath)).toThrow(
      `written by a newer agent-lab (schema version ${SCHEMA_VERSION + 1}`,
    );
    expect(readFileSync(databasePath).equals(before)).toBe(true);
    expect(existsSync(`${databasePath}-wal`)).toBe(false);
  });

  it("gives a clear error for a file that is not SQLite, and leaves it untouched", () => {
    const databasePath = join(directory.path, "notes.txt");
    const text = "these are my notes, not a database\n".repeat(200);
    writeFileSync(databasePath, text);

    expect(() => new SqliteSessionStore(databasePath)).toThrow(DatabaseOpenError);
    expect(() => new SqliteSessionStore(databasePath)).toThrow(
      `${databasePath} is not an agent-lab database: it is not a SQLite file`,
    );
    expect(readFileSync(databasePath, "utf8")).toBe(text);
  });

  it("gives a clear error for a path it cannot create", () => {
    const databasePath = join(directory.path, "no", "such", "folder", "lab.sqlite3");
    expect(() => new SqliteSessionStore(databasePath)).toThrow(
      `cannot open database ${databasePath}`,
    );
  });

  it("keeps session totals exact across the token-total cache, whatever the order of writes", () => {
    const databasePath = join(directory.path, "totals.sqlite3");
    const store = new SqliteSessionStore(databasePath);
    const sessions = ["a", "b", "c"];
    for (const id of sessions) {
      store.createSession({ title: id, config: {}, session_id: id });
      store.startTurn(id, { turn_index: 1, user_message: "go" });
    }
    const expected = new Map(sessions.map((id) => [id, 0]));
    const check = () => {
      const listed = new Map(store.listSessions().map((row) => [row.id, row.total_tokens]));
      expect(listed).toStrictEqual(expected);
    };
    // Enough rows to cross the fold threshold twice, checking before, at and after each fold.
    for (let index = 0; index < FOLD_THRESHOLD * 2 + 17; index++) {
      const id = sessions[index % 3] as string;
      const tokens = (index * 7) % 13;
      store.appendUsage(id, {
        turn_index: 1,
        round_index: 1,
        usage: { total_tokens: tokens },
        elapsed_ms: 1,
        metadata: { metric_key: `chat:${index}` },
      });
      // A retried key must not count twice, before or after a fold.
      store.appendUsage(id, {
        turn_index: 1,
        round_index: 1,
        usage: { total_tokens: 1000 },
        elapsed_ms: 1,
        metadata: { metric_key: `chat:${index}` },
      });
      expected.set(id, (expected.get(id) ?? 0) + tokens);
      if (index % 1999 === 0) check();
    }
    check();
    store.close();
    // A second opener reads the same totals from the cache the first one folded.
    const reopened = new SqliteSessionStore(databasePath);
    expect(new Map(reopened.listSessions().map((row) => [row.id, row.total_tokens]))).toStrictEqual(
      expected,
    );
    reopened.close();
  });

  it.each([1, 2] as const)(
    "opens a schema-version-%i file with its data, provider fields empty, the table estimate filled in, and keeps payloads in it",
    (version) => {
      const databasePath = join(directory.path, `version-${version}.sqlite3`);
      const connection = new Database(databasePath);
      connection.exec(layoutOfVersion(version));
      connection.close();

      const store = new SqliteSessionStore(databasePath);
      expect(store.listSessions().map((row) => [row.id, row.turn_count, row.total_tokens])).toEqual(
        [["old", 1, 26]],
      );
      expect(
        store
          .listMessages("old")
          .map(({ content, reasoning, refusal }) => [content, reasoning, refusal]),
      ).toStrictEqual([
        ["hello", null, null],
        ["hi there", null, null],
      ]);
      const usage = store.usageSummary("old");
      expect(
        usage.calls.map((call) => ({
          estimated: call.estimated,
          usage_source: call.usage_source,
          reasoning_tokens: call.reasoning_tokens,
          cache_write_tokens: call.cache_write_tokens,
          cost_usd: call.cost_usd,
          cost_estimated_usd: call.cost_estimated_usd,
          response_model: call.response_model,
          finish_reason: call.finish_reason,
          refusal: call.refusal,
          raw_usage: call.raw_usage,
        })),
      ).toStrictEqual(
        // Version 1 knew no estimates: both of its calls read as the endpoint's counts.
        [false, version === 2].map((estimated) => ({
          estimated,
          usage_source: estimated ? "estimated" : "endpoint",
          reasoning_tokens: 0,
          cache_write_tokens: 0,
          cost_usd: null,
          // The session's config names no model: the simulated one, which the table prices at 0.
          cost_estimated_usd: 0,
          response_model: null,
          finish_reason: null,
          refusal: false,
          raw_usage: null,
        })),
      );
      expect(usage.session).toMatchObject({ total_tokens: 26, cost_usd: 0, unpriced_count: 0 });
      // The migrated file takes the new writes.
      const payload = {
        metric_key: "chat:1:1",
        turn_index: 1,
        round_index: 1,
        agent: "chat_agent",
        request_body: '{"model":"sim"}',
        response_body: "hi there",
        request_bytes: 15,
        response_bytes: 8,
        request_truncated: false,
        response_truncated: false,
      } as const;
      expect(store.appendCallPayload("old", payload)).toBe(true);
      store.appendMessage("old", {
        turn_index: 1,
        message: { role: "assistant", content: "", refusal: "no" },
      });
      store.close();

      const migrated = new Database(databasePath);
      expect(migrated.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      const usageColumns = columnNames(migrated, "usage_stats");
      for (const column of ["estimated", "reasoning_tokens", "usage_source", "raw_usage_json"]) {
        expect(usageColumns, column).toContain(column);
      }
      expect(columnNames(migrated, "messages")).toEqual(
        expect.arrayContaining(["reasoning", "refusal"]),
      );
      migrated.close();
      const reopened = new SqliteSessionStore(databasePath);
      expect(reopened.getCallPayload("old", "chat:1:1")?.response_body).toBe("hi there");
      expect(reopened.listMessages("old").at(-1)?.refusal).toBe("no");
      reopened.close();
    },
  );

  it.each([1, 2] as const)(
    "prices the model calls of a schema-version-%i file by the table as it upgrades it, as the runtime prices a new call",
    (version) => {
      const databasePath = join(directory.path, `priced-${version}.sqlite3`);
      const connection = new Database(databasePath);
      connection.exec(layoutOfVersion(version));
      const insertSession = connection.prepare(
        "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES (?, ?, 'then', 'then', ?)",
      );
      const configs = {
        // No event agent: the event kernel's calls go to the chat agent's endpoint.
        mini: { chat_agent: { model: "openai:gpt-4.1-mini" } },
        split: { chat_agent: { model: "openai:gpt-4.1-mini" }, event_agent: { model: "sim:fast" } },
        custom: {
          chat_agent: { model: "openai:house-model" },
          prices: { "openai:house-model": { input: 1, output: 2 } },
        },
        unknown: { chat_agent: { model: "openai:house-model" } },
      };
      for (const [id, config] of Object.entries(configs)) {
        insertSession.run(id, id, JSON.stringify(config));
      }
      const insertUsage = connection.prepare(`
        INSERT INTO usage_stats (session_id, turn_index, round_index, prompt_tokens,
          completion_tokens, total_tokens, cached_tokens, elapsed_ms, created_at, agent, call_kind,
          metric_key)
        VALUES (?, 1, ?, 1000, 100, 1100, 200, 5, 'then', ?, ?, ?)`);
      for (const id of Object.keys(configs)) {
        insertUsage.run(id, 1, "chat_agent", "chat_completion", "chat:1:1");
        insertUsage.run(id, 1, "event_kernel", "chat_completion", "kernel:1:1");
        insertUsage.run(id, 2, "chat_agent", "tool_execution", "tool:1:2");
      }
      connection.close();

      const store = new SqliteSessionStore(databasePath);
      const costs = (id: string) =>
        store.usageSummary(id).calls.map((call) => [call.metric_key, call.cost_estimated_usd]);
      // gpt-4.1-mini: 800 uncached prompt tokens at $0.4/M, 200 cached at $0.1/M, 100 out at $1.6/M.
      const mini = (800 * 0.4 + 200 * 0.1 + 100 * 1.6) / 1_000_000;
      // The session's own prices name a model the built-in table does not know.
      const custom = (1000 * 1 + 100 * 2) / 1_000_000;
      const byKey = (chat: number | null, kernel: number | null) => [
        ["chat:1:1", chat],
        ["kernel:1:1", kernel],
        ["tool:1:2", null],
      ];
      expect(Object.fromEntries(Object.keys(configs).map((id) => [id, costs(id)]))).toStrictEqual({
        mini: byKey(mini, mini),
        split: byKey(mini, 0),
        custom: byKey(custom, custom),
        // A model nobody priced stays unpriced, honestly.
        unknown: byKey(null, null),
      });
      expect(store.usageSummary("mini").session).toMatchObject({
        cost_usd: 2 * mini,
        unpriced_count: 0,
      });
      expect(store.usageSummary("unknown").session).toMatchObject({
        cost_usd: null,
        unpriced_count: 2,
      });
      store.close();
    },
  );

  it("fills in the table estimate of a large legacy file in one quick pass", () => {
    const databasePath = join(directory.path, "large.sqlite3");
    const connection = new Database(databasePath);
    connection.exec(layoutOfVersion(2));
    const insertSession = connection.prepare(
      "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES (?, ?, 'then', 'then', ?)",
    );
    const insertUsage = connection.prepare(`
      INSERT INTO usage_stats (session_id, turn_index, round_index, prompt_tokens,
        completion_tokens, total_tokens, cached_tokens, elapsed_ms, created_at, metric_key)
      VALUES (?, 1, ?, 1000, 100, 1100, 0, 5, 'then', ?)`);
    const rows = 100_000;
    connection.transaction(() => {
      for (let session = 0; session < 100; session += 1) {
        insertSession.run(`s${session}`, "s", '{"chat_agent":{"model":"openai:gpt-4.1-mini"}}');
      }
      for (let row = 0; row < rows; row += 1) {
        insertUsage.run(`s${row % 100}`, row + 1, `chat:1:${row + 1}`);
      }
    })();
    connection.close();

    const started = performance.now();
    const store = new SqliteSessionStore(databasePath);
    const elapsed = performance.now() - started;
    store.close();
    const migrated = new Database(databasePath, { readonly: true });
    const priced = migrated
      .prepare("SELECT COUNT(*) FROM usage_stats WHERE cost_estimated_usd = ?")
      .pluck()
      .get((1000 * 0.4 + 100 * 1.6) / 1_000_000);
    migrated.close();
    expect(priced).toBe(rows);
    // About a second on a laptop; minutes would mean a pass per row or per statement.
    expect(elapsed).toBeLessThan(20_000);
  }, 60_000);

  it("stores payloads compressed: stored_bytes is the size of the blobs in the file", () => {
    const databasePath = join(directory.path, "payloads.sqlite3");
    const store = new SqliteSessionStore(databasePath);
    store.createSession({ title: "p", config: {}, session_id: "p" });
    store.startTurn("p", { turn_index: 1, user_message: "go" });
    const body = JSON.stringify({ messages: Array(500).fill({ role: "user", content: "same" }) });
    store.appendCallPayload("p", {
      metric_key: "k",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: body,
      response_body: "data: [DONE]\n\n",
      request_bytes: body.length,
      response_bytes: 14,
      request_truncated: false,
      response_truncated: false,
    });
    const stored = store.getCallPayload("p", "k");
    store.close();
    const raw = new Database(databasePath, { readonly: true });
    const row = raw
      .prepare(
        "SELECT length(request_compressed) + length(response_compressed) AS bytes FROM call_payloads",
      )
      .get() as { bytes: number };
    raw.close();
    expect(stored?.stored_bytes).toBe(row.bytes);
    expect(row.bytes).toBeLessThan(body.length / 50);
    expect(stored?.request_body).toBe(body);
  });

  it("deletes a session with its payloads all or nothing", () => {
    const databasePath = join(directory.path, "atomic-delete.sqlite3");
    const store = new SqliteSessionStore(databasePath);
    store.createSession({ title: "d", config: {}, session_id: "d" });
    store.startTurn("d", { turn_index: 1, user_message: "go" });
    store.appendUsage("d", {
      turn_index: 1,
      round_index: 1,
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      elapsed_ms: 1,
      metadata: { metric_key: "k" },
    });
    store.appendCallPayload("d", {
      metric_key: "k",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: "{}",
      response_body: "ok",
      request_bytes: 2,
      response_bytes: 2,
      request_truncated: false,
      response_truncated: false,
    });
    // Payloads go first; a refusal on a later table must bring them back.
    const connection = new Database(databasePath);
    connection.exec(`CREATE TRIGGER keep_usage BEFORE DELETE ON usage_stats
      BEGIN SELECT RAISE(ABORT, 'usage is kept'); END`);
    expect(() => store.deleteSession("d")).toThrow("usage is kept");
    expect(store.getCallPayload("d", "k")?.response_body).toBe("ok");
    expect(store.getSession("d")).not.toBeNull();
    connection.exec("DROP TRIGGER keep_usage");
    connection.close();
    store.deleteSession("d");
    expect(store.getCallPayload("d", "k")).toBeNull();
    store.close();
  });
});
