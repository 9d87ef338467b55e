import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { createTestDatabase, type TestDatabase } from "../../test/postgres-database.js";
import { StorageError } from "../domain/errors.js";
import { PostgresRunQueue } from "./postgres/run-queue.js";
import type { PlannedRunRow, RunQueue } from "./run-queue.js";
import { SqliteRunQueue } from "./sqlite/run-queue.js";
import { SqliteSessionStore } from "./sqlite/sqlite-session-store.js";

/**
 * The run queue's promises, the same on both backends: plan rows inserted once, claims in plan
 * order and never twice, a lapsed lease claimed again (a negative lease is lapsed at once: no
 * waiting), a run finished only by its holder and only once, runs given back, the store's truth
 * applied.
 */

const plan = (count: number, offset = 0): PlannedRunRow[] =>
  Array.from({ length: count }, (_, index) => ({
    run_key: `cell/s${index + offset}/1`,
    seq: index + offset,
    cell: "cell",
    scenario: `s${index + offset}`,
    repetition: 1,
  }));

let experiments = 0;
const freshId = () => `exp-${++experiments}`;

function queueContract(name: string, open: () => RunQueue) {
  describe(`run queue on ${name}`, () => {
    it("stores the plan and inserts each run once, whoever adds it", async () => {
      const queue = open();
      const id = freshId();
      expect(await queue.readExperiment(id)).toBeNull();
      await queue.saveExperiment({
        experiment_id: id,
        suite: { name: "s", n: [1] },
        suite_file: "a.yaml",
      });
      expect(await queue.readExperiment(id)).toEqual({
        experiment_id: id,
        suite: { name: "s", n: [1] },
        suite_file: "a.yaml",
      });
      expect(await queue.addRuns(id, plan(3))).toBe(3);
      expect(await queue.addRuns(id, plan(5))).toBe(2);
      const counts = await queue.counts(id);
      expect([counts.total, counts.pending, counts.claimed, counts.done]).toEqual([5, 5, 0, 0]);
    });

    it("claims in plan order, never one run twice, and finishes a run once, by its holder", async () => {
      const queue = open();
      const id = freshId();
      await queue.addRuns(id, plan(4));
      const a = await queue.claim(id, "A", 60_000);
      const b = await queue.claim(id, "B", 60_000);
      expect([a?.run_key, b?.run_key]).toEqual(["cell/s0/1", "cell/s1/1"]);
      expect(a).toMatchObject({ attempt: 1, previous_session: null });
      expect(await queue.finish(id, "cell/s0/1", "B", "finished")).toBe(false);
      expect(await queue.finish(id, "cell/s0/1", "A", "failed")).toBe(true);
      expect(await queue.finish(id, "cell/s0/1", "A", "finished")).toBe(false);
      expect(await queue.fail(id, "cell/s1/1", "B", "no model")).toBe(true);
      const counts = await queue.counts(id);
      expect(counts).toMatchObject({ done: 1, failed: 1, errors: 1, claimed: 0, pending: 2 });
      // The run that ended last, a run that could not run included (progress counts it done).
      expect(counts.last?.run_key).toBe("cell/s1/1");
      expect(await queue.errors(id, 10)).toEqual([{ run_key: "cell/s1/1", message: "no model" }]);
    });

    it("gives a lapsed claim to another worker; the first then can neither attach nor finish", async () => {
      const queue = open();
      const id = freshId();
      await queue.addRuns(id, plan(2));
      // Lapsed the moment it is taken: a worker that died right away.
      const first = await queue.claim(id, "A", -1000);
      expect(await queue.attach(id, first?.run_key ?? "", "A", "session-a")).toBe(true);
      const counts = await queue.counts(id);
      expect(counts.next_expiry_ms).toBeLessThan(0);
      const second = await queue.claim(id, "B", 60_000);
      expect(second).toMatchObject({
        run_key: first?.run_key,
        attempt: 2,
        previous_session: "session-a",
      });
      expect(await queue.renew(id, "A", 60_000)).toEqual(new Set());
      expect(await queue.renew(id, "B", 60_000)).toEqual(new Set([first?.run_key]));
      expect(await queue.attach(id, first?.run_key ?? "", "A", "session-a2")).toBe(false);
      expect(await queue.finish(id, first?.run_key ?? "", "A", "finished")).toBe(false);
      expect(await queue.sessionOf(id, first?.run_key ?? "")).toBe("session-a");
      expect(await queue.attach(id, first?.run_key ?? "", "B", "session-b")).toBe(true);
      expect(await queue.finish(id, first?.run_key ?? "", "B", "finished")).toBe(true);
      expect((await queue.counts(id)).reclaimed).toBe(1);
    });

    it("a worker that claims its own lapsed run again: the earlier attempt's attach, finish and fail change nothing", async () => {
      const queue = open();
      const id = freshId();
      await queue.addRuns(id, plan(1));
      const first = await queue.claim(id, "A", -1000);
      const again = await queue.claim(id, "A", 60_000);
      const key = again?.run_key ?? "";
      expect([first?.attempt, again?.attempt, again?.run_key]).toEqual([1, 2, first?.run_key]);
      expect(await queue.attach(id, key, "A", "session-2", 2)).toBe(true);
      // The first attempt's attach, sent before the claim again, lands after it.
      expect(await queue.attach(id, key, "A", "session-1", 1)).toBe(false);
      expect(await queue.sessionOf(id, key)).toBe("session-2");
      expect(await queue.fail(id, key, "A", "session not found", 1)).toBe(false);
      expect(await queue.finish(id, key, "A", "finished", 1)).toBe(false);
      expect(await queue.finish(id, key, "A", "finished", 2)).toBe(true);
      expect(await queue.counts(id)).toMatchObject({ done: 1, errors: 0 });
    });

    it("takes back a stopped worker's runs, keeping their session for the next claimer", async () => {
      const queue = open();
      const id = freshId();
      await queue.addRuns(id, plan(2));
      const run = await queue.claim(id, "A", 60_000);
      await queue.attach(id, run?.run_key ?? "", "A", "cancelled-attempt");
      await queue.claim(id, "A", 60_000);
      expect(await queue.release(id, "A")).toBe(2);
      expect(await queue.release(id, "A")).toBe(0);
      const again = await queue.claim(id, "B", 60_000);
      expect(again).toMatchObject({ run_key: run?.run_key, previous_session: "cancelled-attempt" });
    });

    it("applies the store's truth: stored runs done, vanished ones reopened, stale sessions handed on", async () => {
      const queue = open();
      const id = freshId();
      await queue.addRuns(id, plan(4));
      const taken = await queue.claim(id, "A", 60_000);
      await queue.attach(id, taken?.run_key ?? "", "A", "s-0");
      await queue.finish(id, taken?.run_key ?? "", "A", "finished");
      await queue.claim(id, "A", 60_000);
      await queue.fail(id, "cell/s1/1", "A", "broken");
      expect(await queue.doneRuns(id)).toEqual(new Map([["cell/s0/1", "s-0"]]));
      await queue.reconcile(id, {
        stored: [{ run_key: "cell/s2/1", session_id: "s-2" }],
        reopened: [{ run_key: "cell/s0/1", session_id: "s-0" }],
        stale: [{ run_key: "cell/s3/1", session_id: "old-3" }],
        retry_errors: true,
      });
      expect(await queue.doneRuns(id)).toEqual(new Map([["cell/s2/1", "s-2"]]));
      const counts = await queue.counts(id);
      expect(counts).toMatchObject({ done: 1, errors: 0, pending: 3 });
      // A run the store says is complete is not claimed; the order is the plan's.
      const claims = [];
      for (
        let run = await queue.claim(id, "B", 60_000);
        run !== null;
        run = await queue.claim(id, "B", 60_000)
      )
        claims.push([run.run_key, run.previous_session]);
      expect(claims).toEqual([
        ["cell/s0/1", null],
        ["cell/s1/1", null],
        ["cell/s3/1", "old-3"],
      ]);
    });

    it("never hands one run to two of many claimers at once", async () => {
      const queue = open();
      const id = freshId();
      await queue.addRuns(id, plan(60));
      const taken: string[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          for (;;) {
            const run = await queue.claim(id, `W${worker}`, 60_000);
            if (run === null) return;
            taken.push(run.run_key);
            expect(await queue.finish(id, run.run_key, `W${worker}`, "finished")).toBe(true);
          }
        }),
      );
      expect(taken).toHaveLength(60);
      expect(new Set(taken).size).toBe(60);
      expect((await queue.counts(id)).done).toBe(60);
    });
  });
}

const folder = temporaryDirectory();
const sqlitePath = join(folder.path, "lab.sqlite3");
const sqliteQueues: SqliteRunQueue[] = [];
// The store makes the file (WAL and all) as the CLI does; the queue opens its own connection.
new SqliteSessionStore(sqlitePath).close();
queueContract("SQLite", () => {
  const queue = new SqliteRunQueue(sqlitePath);
  sqliteQueues.push(queue);
  return queue;
});
afterAll(async () => {
  for (const queue of sqliteQueues) await queue.close();
  folder.remove();
});

let database: TestDatabase;
let pool: pg.Pool;
let postgresQueue: PostgresRunQueue;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 8 });
  // As the store's own pool does (connection.ts): an idle connection that the server ends (the
  // test database dropped WITH (FORCE) while a connection still closes) is no test's failure.
  pool.on("error", () => {});
  postgresQueue = await PostgresRunQueue.open(pool);
  // A second open (another worker starting) finds the tables and changes nothing.
  await PostgresRunQueue.open(pool);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});
queueContract("PostgreSQL", () => postgresQueue);

describe("PostgresRunQueue's transactions", () => {
  it("come out as a StorageError naming the reason and SQLSTATE when the database refuses", async () => {
    const own = await createTestDatabase();
    const ownPool = new pg.Pool({ connectionString: own.url, max: 2 });
    ownPool.on("error", () => {});
    try {
      const queue = await PostgresRunQueue.open(ownPool);
      await ownPool.query("ALTER TABLE queued_runs RENAME TO queued_runs_gone");
      const refused = queue.reconcile("exp", {
        stored: [],
        reopened: [],
        stale: [],
        retry_errors: false,
      });
      await expect(refused).rejects.toBeInstanceOf(StorageError);
      await expect(refused).rejects.toMatchObject({
        storageCode: "42P01",
        message: expect.stringContaining('relation "queued_runs" does not exist'),
      });
      // The refused transaction rolled back and gave its connection back: the pool still works.
      expect((await ownPool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      expect(ownPool.totalCount - ownPool.idleCount).toBe(0);
    } finally {
      await ownPool.end();
      await own.drop();
    }
  });
});
