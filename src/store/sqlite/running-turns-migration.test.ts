import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../../test/paths.js";
import { SCHEMA_VERSION } from "./schema.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/**
 * Version 6: a claim finds a session's running turns from the turns_running partial index. A file
 * of version 5 gets the index on open, and the claim still sees every kind of running turn it
 * saw before: a running one, and a legacy one without a status or a completion time.
 */
describe("SqliteSessionStore: the running-turns index (schema version 6)", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  const alive = () => true;
  const dead = () => false;

  it("is added when a version-5 file is upgraded, and the claim sees the running turns through it", async () => {
    const path = join(directory.path, "v5.sqlite3");
    const store = new SqliteSessionStore(path);
    await store.createSession({ title: "old", config: {}, session_id: "old" });
    for (let turn = 1; turn <= 3; turn++) {
      const { turn_index } = store.claimTurn("old", { user_message: `m${turn}`, runner: "r" });
      store.completeTurn("old", { turn_index, wall_time_ms: 1 });
    }
    store.claimTurn("old", { user_message: "m4", runner: "1@elsewhere" });
    store.close();
    // As version 5 left it: no index; and a legacy turn 5 that never completed, without a status.
    const raw = new Database(path);
    raw.exec("DROP INDEX turns_running");
    raw
      .prepare(
        "INSERT INTO turns (session_id, turn_index, user_message, started_at) VALUES ('old', 5, 'm5', '2026-01-01T00:00:00.000Z')",
      )
      .run();
    raw.pragma("user_version = 5");
    raw.close();

    const reopened = new SqliteSessionStore(path);
    try {
      const check = new Database(path, { readonly: true });
      try {
        expect(check.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
        const plan = check
          .prepare(
            `EXPLAIN QUERY PLAN SELECT turn_index FROM turns WHERE session_id = ?
              AND (status = 'running' OR (status IS NULL AND completed_at IS NULL))`,
          )
          .all("old") as { detail: string }[];
        expect(plan.map((step) => step.detail).join("; ")).toContain("turns_running");
      } finally {
        check.close();
      }
      // A live runner's turn refuses the claim, naming the first running turn.
      expect(() =>
        reopened.claimTurn("old", { user_message: "m6", runner: "r", is_runner_alive: alive }),
      ).toThrow(/turn 4/);
      // Dead runners: both running turns are interrupted, finished ones are left alone.
      const claim = reopened.claimTurn("old", {
        user_message: "m6",
        runner: "r",
        is_runner_alive: dead,
      });
      expect(claim).toEqual({ turn_index: 6, interrupted: [4, 5] });
      expect(reopened.listTurns("old").map((turn) => turn.status)).toEqual([
        "completed",
        "completed",
        "completed",
        "interrupted",
        "interrupted",
        "running",
      ]);
      expect(reopened.listSessions().find((session) => session.id === "old")?.turn_count).toBe(6);
    } finally {
      reopened.close();
    }
  });

  it("refuses a claim on an unknown session without writing anything", () => {
    const store = new SqliteSessionStore(join(directory.path, "none.sqlite3"));
    try {
      expect(() => store.claimTurn("missing", { user_message: "hi", runner: "r" })).toThrow(
        /missing/,
      );
      expect(store.listTurns("missing")).toEqual([]);
      expect(store.listMessages("missing")).toEqual([]);
    } finally {
      store.close();
    }
  });
});
