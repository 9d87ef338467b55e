import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../../test/paths.js";
import { experimentTag as tag } from "../experiment-records.contract.js";
import { sessionsSql } from "./experiment-records.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/**
 * An experiment is read a slice of sessions at a time, in (`created_at`, insertion) order: each
 * slice must seek to its start in the index, and sessions sharing a `created_at` (or with an odd
 * one an import kept) must each come exactly once.
 */
describe("SqliteSessionStore: an experiment's slices", () => {
  const folders: { remove(): void }[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) folder.remove();
  });
  /** A fresh database file's path, removed after the test. */
  function freshPath(): string {
    const folder = temporaryDirectory();
    folders.push(folder);
    return join(folder.path, "lab.sqlite3");
  }

  async function sliceIds(store: SqliteSessionStore, limit: number): Promise<string[][]> {
    const slices: string[][] = [];
    let cursor: string | null = null;
    do {
      const slice = await store.experimentScoringRows("exp", {
        limit,
        ...(cursor !== null ? { cursor } : {}),
      });
      slices.push(slice.sessions.map((session) => session.id));
      cursor = slice.next_cursor;
    } while (cursor !== null);
    return slices;
  }

  it("reads sessions sharing a created_at (or an empty one) once each, in insertion order", async () => {
    const path = freshPath();
    const store = new SqliteSessionStore(path);
    try {
      for (let run = 1; run <= 7; run++) {
        await store.createSession({
          session_id: `exp-${run}`,
          title: `run ${run}`,
          config: { experiment: tag("exp", run) },
        });
      }
      const raw = new Database(path);
      try {
        // Runs 2-5 share one instant, run 6 has the lowest text there is; 1 and 7 keep theirs.
        raw
          .prepare(
            "UPDATE sessions SET created_at = ? WHERE id IN ('exp-2', 'exp-3', 'exp-4', 'exp-5')",
          )
          .run("2026-01-01T00:00:00.000Z");
        raw.prepare("UPDATE sessions SET created_at = '' WHERE id = 'exp-6'").run();
      } finally {
        raw.close();
      }
      const order = ["exp-6", "exp-2", "exp-3", "exp-4", "exp-5", "exp-1", "exp-7"];
      expect((await sliceIds(store, 2)).flat()).toStrictEqual(order);
      expect(await sliceIds(store, 3)).toStrictEqual([
        order.slice(0, 3),
        order.slice(3, 6),
        order.slice(6),
      ]);
      expect((await sliceIds(store, 10)).flat()).toStrictEqual(order);
    } finally {
      store.close();
    }
  });

  it("seeks each slice's start in the experiment's index, not scanning from its first session", () => {
    const path = freshPath();
    new SqliteSessionStore(path).close();
    const raw = new Database(path, { readonly: true });
    try {
      const plan = raw
        .prepare(`EXPLAIN QUERY PLAN ${sessionsSql("id")}`)
        .all({ experiment: "exp", after_at: "", after_position: 0, limit: 1 }) as {
        detail: string;
      }[];
      expect(plan.map((step) => step.detail).join("\n")).toMatch(
        /USING INDEX sessions_experiment \(experiment_id=\? AND created_at>\?\)/,
      );
    } finally {
      raw.close();
    }
  });
});
