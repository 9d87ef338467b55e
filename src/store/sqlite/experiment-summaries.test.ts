import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../../test/paths.js";
import { experimentTag as tag } from "../experiment-records.contract.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/**
 * The experiments' summaries are kept by triggers as sessions are written (experiment-summaries.ts).
 * Whatever the writes, they must be what a GROUP BY over the sessions gives, which they replace.
 */

/** The GROUP BY the summaries replace; the tag is the earliest session's. */
const GROUPED = `
  SELECT experiment_id AS id, count(*) AS sessions, min(created_at) AS first_created_at,
    max(created_at) AS last_created_at, max(updated_at) AS last_updated_at,
    (SELECT json_extract(config_json, '$.experiment') FROM sessions AS inner_sessions
     WHERE inner_sessions.experiment_id = sessions.experiment_id ORDER BY created_at LIMIT 1) AS tag_json
  FROM sessions WHERE experiment_id IS NOT NULL GROUP BY experiment_id ORDER BY id`;
const KEPT = `
  SELECT id, sessions, first_created_at, last_created_at, last_updated_at, tag_json
  FROM experiment_summaries WHERE sessions > 0 ORDER BY id`;

describe("SqliteSessionStore: the experiments' summaries kept as sessions are written", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let path: string;
  beforeEach(() => {
    directory = temporaryDirectory();
    path = join(directory.path, "lab.sqlite3");
  });
  afterEach(() => directory.remove());

  function read(sql: string): unknown[] {
    const raw = new Database(path, { readonly: true });
    try {
      return raw.prepare(sql).all();
    } finally {
      raw.close();
    }
  }

  const revisionOf = (store: SqliteSessionStore, id: string) =>
    store.listExperimentSummaries({ experiment: id }).items[0]?.revision;

  /** Sessions created a few milliseconds apart, so their dates order them. */
  async function create(
    store: SqliteSessionStore,
    id: string,
    config: Record<string, unknown>,
  ): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 3));
    store.createSession({ session_id: id, title: id, config });
  }

  it("equal the GROUP BY over the sessions through create, a run going on, import and delete", async () => {
    const store = new SqliteSessionStore(path);
    try {
      for (let run = 1; run <= 4; run++)
        await create(store, `a-${run}`, { experiment: tag("a", run) });
      await create(store, "b-1", { experiment: tag("b", 1) });
      await create(store, "plain", {});
      expect(read(KEPT)).toEqual(read(GROUPED));
      expect(read(KEPT)).toHaveLength(2);

      // A run going on moves last_updated_at and the revision.
      const before = revisionOf(store, "a") ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 3));
      store.startTurn("a-2", { turn_index: 1, user_message: "go" });
      store.completeTurn("a-2", { turn_index: 1, wall_time_ms: 1 });
      expect(revisionOf(store, "a")).toBeGreaterThan(before);
      expect(read(KEPT)).toEqual(read(GROUPED));

      // An imported copy joins its experiment.
      await new Promise((resolve) => setTimeout(resolve, 3));
      store.importSession(store.exportSession("b-1"), { session_id: "b-copy" });
      expect(store.listExperimentSummaries({ experiment: "b" }).items[0]?.sessions).toBe(2);
      expect(read(KEPT)).toEqual(read(GROUPED));

      // Deleting the first, the last and the latest-updated session moves each bound.
      for (const id of ["a-1", "a-4", "a-2"]) {
        const revision = revisionOf(store, "a") ?? 0;
        store.deleteSession(id);
        expect(revisionOf(store, "a")).toBeGreaterThan(revision);
        expect(read(KEPT)).toEqual(read(GROUPED));
      }
      // An experiment whose sessions are all gone is no longer listed.
      store.deleteSession("b-1");
      store.deleteSession("b-copy");
      expect(store.listExperimentSummaries().items.map((item) => item.id)).toStrictEqual(["a"]);
      expect(read(KEPT)).toEqual(read(GROUPED));

      // ... and comes back, with a revision that never goes back, when a session joins it again.
      const gone = (
        read("SELECT revision FROM experiment_summaries WHERE id = 'b'")[0] as {
          revision: number;
        }
      ).revision;
      await create(store, "b-2", { experiment: tag("b", 2) });
      expect(revisionOf(store, "b")).toBeGreaterThan(gone);
      expect(read(KEPT)).toEqual(read(GROUPED));
    } finally {
      store.close();
    }
  });

  /** Runs a-1…a-3 of experiment a, then b-1 of b. */
  async function threeAndOne(store: SqliteSessionStore): Promise<void> {
    for (let run = 1; run <= 3; run++) {
      await create(store, `a-${run}`, { experiment: tag("a", run) });
    }
    await create(store, "b-1", { experiment: tag("b", 1) });
  }

  it("follow a session whose tag or dates another writer changes", async () => {
    const store = new SqliteSessionStore(path);
    await threeAndOne(store);
    store.close();
    // Another writer (an older build, a hand edit) moves a session to another experiment, renames
    // the earliest session's suite, and backdates one.
    const raw = new Database(path);
    const setConfig = raw.prepare("UPDATE sessions SET config_json = ? WHERE id = ?");
    setConfig.run(JSON.stringify({ experiment: tag("b", 9) }), "a-3");
    setConfig.run(JSON.stringify({ experiment: tag("a", 1, "renamed") }), "a-1");
    raw
      .prepare("UPDATE sessions SET created_at = '2000-01-01T00:00:00.000Z' WHERE id = 'a-2'")
      .run();
    raw.close();
    expect(read(KEPT)).toEqual(read(GROUPED));
    const reopened = new SqliteSessionStore(path);
    try {
      expect(
        reopened.listExperimentSummaries().items.map((item) => [item.id, item.sessions]),
      ).toStrictEqual([
        ["b", 2],
        ["a", 2],
      ]);
    } finally {
      reopened.close();
    }
  });

  it("are rebuilt from the sessions when a version-4 file is upgraded", async () => {
    const store = new SqliteSessionStore(path);
    await threeAndOne(store);
    const before = store.listExperimentSummaries();
    store.close();
    // As version 4 left it: no summaries, no triggers.
    const raw = new Database(path);
    for (const trigger of ["insert", "delete", "touch", "reshape"]) {
      raw.exec(`DROP TRIGGER sessions_experiment_${trigger}`);
    }
    raw.exec("DROP TABLE experiment_summaries");
    raw.pragma("user_version = 4");
    raw.close();

    const reopened = new SqliteSessionStore(path);
    try {
      expect(read(KEPT)).toEqual(read(GROUPED));
      expect(reopened.listExperimentSummaries().items).toEqual(
        before.items.map((item) => ({ ...item, revision: expect.any(Number) })),
      );
    } finally {
      reopened.close();
    }
  });
});
