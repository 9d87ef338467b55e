import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { layoutOfVersion } from "../../../test/legacy-layouts.js";
import { temporaryDirectory } from "../../../test/paths.js";
import { SCHEMA_VERSION, TABLES } from "./schema.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/** What version 4 added to sessions; every other column of schema.ts was there in version 3. */
const VERSION_4_COLUMNS = new Set([
  "experiment_id",
  "mode",
  "chat_model",
  "event_model",
  "last_status",
]);

/** A file exactly as schema version 3 left it: version 2's layout, its columns and payloads. */
function writeVersion3(path: string): Database.Database {
  const connection = new Database(path);
  connection.exec(layoutOfVersion(2));
  for (const table of TABLES.filter((layout) => layout.name !== "sessions")) {
    const present = new Set(
      (connection.pragma(`table_info(${table.name})`) as { name: string }[]).map((c) => c.name),
    );
    for (const [name, definition] of table.columns) {
      if (!present.has(name) && !VERSION_4_COLUMNS.has(name)) {
        connection.exec(`ALTER TABLE ${table.name} ADD COLUMN ${name} ${definition}`);
      }
    }
  }
  connection.exec(TABLES.find((table) => table.name === "call_payloads")?.create ?? "");
  connection.pragma("user_version = 3");
  return connection;
}

describe("SqliteSessionStore: schema version 4, the list filters", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it("upgrades a version-3 file with the filter columns, tags, statuses and title index filled in", () => {
    const path = join(directory.path, "v3.sqlite3");
    const connection = writeVersion3(path);
    const insert = connection.prepare(
      "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES (?, ?, ?, ?, ?)",
    );
    insert.run(
      "tagged",
      "Nightly regression",
      "2026-01-02T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z",
      JSON.stringify({
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "openai:gpt-4.1-mini" },
        tags: ["nightly", 7],
        experiment: { id: "exp-3" },
      }),
    );
    // A legacy config that is not JSON: no tags, default mode and model, no experiment.
    insert.run(
      "broken",
      "Broken config",
      "2026-01-03T00:00:00.000Z",
      "2026-01-03T00:00:00.000Z",
      "{",
    );
    // A legacy turn without a status is running while it has no completion time.
    connection
      .prepare(
        "INSERT INTO turns (session_id, turn_index, user_message, started_at) VALUES (?, ?, ?, ?)",
      )
      .run("tagged", 1, "go", "2026-01-02T00:00:00.000Z");
    connection.close();

    const store = new SqliteSessionStore(path);
    const byId = new Map(store.listSessionPage({}).sessions.map((item) => [item.id, item]));
    expect(byId.get("tagged")).toMatchObject({
      tags: ["nightly"],
      experiment_id: "exp-3",
      last_status: "running",
      tool_invocation_mode: "chat_agent_tools",
      chat_model: "openai:gpt-4.1-mini",
      event_model: "openai:gpt-4.1-mini",
    });
    expect(byId.get("broken")).toMatchObject({
      tags: [],
      experiment_id: null,
      last_status: null,
      tool_invocation_mode: "dual_agent",
      chat_model: "sim",
    });
    // "old" came with the layout: one completed turn.
    expect(byId.get("old")).toMatchObject({ last_status: "completed", tags: [] });
    const ids = (query: Parameters<SqliteSessionStore["listSessionPage"]>[0]) =>
      store.listSessionPage(query).sessions.map((item) => item.id);
    expect(ids({ tag: "nightly" })).toStrictEqual(["tagged"]);
    expect(ids({ q: "regress" })).toStrictEqual(["tagged"]);
    expect(ids({ status: "running" })).toStrictEqual(["tagged"]);
    expect(ids({ model: "openai:gpt-4.1-mini" })).toStrictEqual(["tagged"]);
    expect(ids({ mode: "dual_agent" }).sort()).toStrictEqual(["broken"]);
    expect(ids({ experiment: "exp-3" })).toStrictEqual(["tagged"]);

    // The triggers keep them from now on.
    store.completeTurn("tagged", { turn_index: 1, wall_time_ms: 1, status: "failed" });
    expect(ids({ status: "failed" })).toStrictEqual(["tagged"]);
    // A write moves the session to the front, in the tag's own order too.
    expect(ids({ tag: "nightly" })).toStrictEqual(["tagged"]);
    // ("old" was updated 'then', which sorts after any ISO time.)
    expect(ids({})).toStrictEqual(["old", "tagged", "broken"]);
    expect(ids({ updated_from: "2026-01-04" })).toStrictEqual(["old", "tagged"]);
    store.deleteSession("tagged");
    expect(ids({ tag: "nightly" })).toStrictEqual([]);
    expect(ids({ q: "regress" })).toStrictEqual([]);
    store.close();

    const migrated = new Database(path);
    expect(migrated.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    const plan = (sql: string) =>
      (migrated.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((row) => row.detail)
        .join("; ");
    // Each filter reads its rows in list order from an index: no sort of every match.
    const order = "ORDER BY updated_at DESC, id DESC LIMIT 51";
    expect(plan(`SELECT id FROM sessions WHERE mode = 'x' ${order}`)).toMatch(
      /sessions_mode_updated/,
    );
    expect(plan(`SELECT id FROM sessions WHERE last_status = 'x' ${order}`)).toMatch(
      /sessions_status_updated/,
    );
    expect(plan(`SELECT id FROM sessions WHERE experiment_id = 'x' ${order}`)).toMatch(
      /sessions_experiment_updated/,
    );
    for (const sql of [
      `SELECT id FROM sessions WHERE mode = 'x' ${order}`,
      `SELECT id FROM sessions WHERE (updated_at, id) < ('a', 'b') ${order}`,
    ]) {
      expect(plan(sql)).not.toMatch(/TEMP B-TREE/);
    }
    migrated.close();
  });

  it("finds a title among the newest rows or through the trigram index, the same either way", () => {
    const path = join(directory.path, "search.sqlite3");
    new SqliteSessionStore(path).close();
    const connection = new Database(path);
    const insert = connection.prepare(
      "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES (?, ?, ?, ?, '{}')",
    );
    connection.transaction(() => {
      // Three old needles, then more haystack than a search reads before it asks the index.
      for (let index = 0; index < 2_503; index++) {
        const at = new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString();
        const title = index < 3 ? `Old Needle ${index}` : `Hay ${index} «straw»`;
        insert.run(`s${String(index).padStart(5, "0")}`, title, at, at);
      }
    })();
    connection.close();
    const store = new SqliteSessionStore(path);
    const titles = (q: string, limit = 50) =>
      store.listSessionPage({ q, limit }).sessions.map((item) => item.title);
    expect(titles("needle")).toStrictEqual(["Old Needle 2", "Old Needle 1", "Old Needle 0"]);
    expect(titles("NEEDLE 1")).toStrictEqual(["Old Needle 1"]);
    expect(titles("«STRAW»", 2)).toStrictEqual(["Hay 2502 «straw»", "Hay 2501 «straw»"]);
    // A common text pages through all its matches in order, exactly once.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = store.listSessionPage({ q: "hay", limit: 500, ...(cursor ? { cursor } : {}) });
      seen.push(...page.sessions.map((item) => item.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toHaveLength(2_500);
    expect(new Set(seen).size).toBe(2_500);
    expect(seen[0]).toBe("s02502");
    store.close();
  });
});
