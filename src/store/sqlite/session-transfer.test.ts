import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../../test/paths.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { FOLD_THRESHOLD } from "./token-fold.js";

/** The listing's token cache (token-fold.ts) across deleteSession and importSession. */
describe("SqliteSessionStore: deleting and importing keep listSessions totals right", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  function addCalls(store: SqliteSessionStore, sessionId: string, count: number, tokens = 1) {
    if (store.listTurns(sessionId).length === 0) {
      store.startTurn(sessionId, { turn_index: 1, user_message: "go" });
    }
    for (let index = 0; index < count; index++) {
      store.appendUsage(sessionId, {
        turn_index: 1,
        round_index: 1,
        usage: { total_tokens: tokens },
        elapsed_ms: 1,
      });
    }
  }

  function rawTotals(path: string): Record<string, number> {
    const db = new Database(path, { readonly: true });
    const rows = db
      .prepare(
        `SELECT s.id, (SELECT COALESCE(SUM(total_tokens), 0) FROM usage_stats u WHERE u.session_id = s.id) AS total
         FROM sessions s`,
      )
      .all() as { id: string; total: number }[];
    db.close();
    return Object.fromEntries(rows.map((row) => [row.id, row.total]));
  }

  function listedTotals(store: SqliteSessionStore): Record<string, number> {
    return Object.fromEntries(store.listSessions().map((row) => [row.id, row.total_tokens]));
  }

  it("after folding, deleting the session with the newest calls, even without AUTOINCREMENT", () => {
    const path = join(directory.path, "no-autoincrement.sqlite3");
    // A layout whose usage ids SQLite may hand out again once the newest rows are gone.
    const legacy = new Database(path);
    legacy.exec(`CREATE TABLE usage_stats (
      id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL,
      round_index INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
      total_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, ttft_ms INTEGER,
      elapsed_ms INTEGER NOT NULL, created_at TEXT NOT NULL)`);
    legacy.close();
    const store = new SqliteSessionStore(path);
    store.createSession({ title: "kept", config: {}, session_id: "kept" });
    store.createSession({ title: "gone", config: {}, session_id: "gone" });
    addCalls(store, "kept", 10, 2);
    addCalls(store, "gone", FOLD_THRESHOLD);
    expect(listedTotals(store)).toStrictEqual({ kept: 20, gone: FOLD_THRESHOLD }); // folds

    store.deleteSession("gone");
    addCalls(store, "kept", 5, 3); // may reuse the deleted ids
    expect(listedTotals(store)).toStrictEqual({ kept: 35 });
    expect(store.listSessionOverviews().map((row) => row.total_tokens)).toStrictEqual([35]);
    expect(listedTotals(store)).toStrictEqual(rawTotals(path));
    store.close();
  });

  it("an imported session counts from the tail, and folds like any other", () => {
    const path = join(directory.path, "import.sqlite3");
    const store = new SqliteSessionStore(path);
    store.createSession({ title: "source", config: {}, session_id: "source" });
    addCalls(store, "source", 20, 5);
    store.listSessions();
    const document = store.exportSession("source");
    store.importSession(document, { session_id: "copy" });
    expect(listedTotals(store)).toStrictEqual({ source: 100, copy: 100 });
    // Push the tail over the threshold so the imported rows get folded in, then check again.
    store.createSession({ title: "bulk", config: {}, session_id: "bulk" });
    addCalls(store, "bulk", FOLD_THRESHOLD);
    expect(listedTotals(store)).toStrictEqual({ source: 100, copy: 100, bulk: FOLD_THRESHOLD });
    store.deleteSession("copy");
    store.importSession(document, { session_id: "copy" });
    expect(listedTotals(store)).toStrictEqual(rawTotals(path));
    store.close();
  });
});
