import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextMillisecond } from "../../../test/next-millisecond.js";
import { temporaryDirectory } from "../../../test/paths.js";
import { SCHEMA_VERSION } from "./schema.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { SQL } from "./statements.js";

/**
 * Version 7: the whole session list is read from the covering index `sessions_listed`, which
 * replaces `sessions_updated` (the order alone). A file of version 6 gets it on open, and the list
 * it returns is the one it returned before, in the same order, with the same totals.
 */
describe("SqliteSessionStore: the session list's covering index (schema version 7)", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  const planOf = (db: Database.Database, sql: string) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
      .map((step) => step.detail)
      .join("; ");

  it("replaces sessions_updated when a version-6 file is upgraded, and the list reads only the index", async () => {
    const path = join(directory.path, "v6.sqlite3");
    const store = new SqliteSessionStore(path);
    for (const id of ["a", "b", "c"]) {
      await store.createSession({ title: `title ${id}`, config: {}, session_id: id });
    }
    // b's turn must be stamped after c's creation: a tie is ordered by id, c before b.
    nextMillisecond();
    const { turn_index } = store.claimTurn("b", { user_message: "hi", runner: "r" });
    store.appendUsage("b", {
      turn_index,
      round_index: 1,
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, cached_tokens: 0 },
      ttft_ms: null,
      elapsed_ms: 1,
      metadata: { metric_key: "chat:1:1" },
    });
    store.completeTurn("b", { turn_index, wall_time_ms: 1 });
    const before = store.listSessions();
    store.close();
    // As version 6 left it: the order-only index, no covering one.
    const raw = new Database(path);
    raw.exec("DROP INDEX sessions_listed");
    raw.exec("CREATE INDEX sessions_updated ON sessions (updated_at DESC, id DESC)");
    raw.pragma("user_version = 6");
    raw.close();

    const reopened = new SqliteSessionStore(path);
    try {
      expect(reopened.listSessions()).toStrictEqual(before);
      expect(before.map((row) => [row.id, row.turn_count, row.total_tokens])).toEqual([
        ["b", 1, 7],
        ["c", 0, 0],
        ["a", 0, 0],
      ]);
      const check = new Database(path, { readonly: true });
      try {
        expect(check.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
        const indexes = (check.pragma("index_list(sessions)") as { name: string }[]).map(
          (index) => index.name,
        );
        expect(indexes).toContain("sessions_listed");
        expect(indexes).not.toContain("sessions_updated");
        // The store's own statement: its subquery reads the index alone, nothing else.
        const plan = planOf(check, SQL.listSessions);
        expect(plan).toContain("SCAN sessions USING COVERING INDEX sessions_listed");
        expect(plan).not.toMatch(/SCAN sessions(?! USING COVERING)|SEARCH sessions|TEMP B-TREE/);
      } finally {
        check.close();
      }
    } finally {
      reopened.close();
    }
  });
});
