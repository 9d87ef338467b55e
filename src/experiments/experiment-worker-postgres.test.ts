import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/postgres-database.js";
import { TcpRelay } from "../../test/tcp-relay.js";
import { createLabProviders } from "../composition/lab-providers.js";
import { StorageError } from "../domain/errors.js";
import { Suite } from "../domain/experiment.js";
import { PostgresSessionStore } from "../store/postgres/postgres-session-store.js";
import type { RunQueue } from "../store/run-queue.js";
import { openRunQueue } from "../store/run-queue-open.js";
import type { AppendRecordsOptions } from "../store/store-inputs.js";
import { findExperimentRuns } from "./experiment-runs.js";
import { runWorker, type WorkerOutcome } from "./experiment-worker.js";
import { publishExperiment } from "./queue-plan.js";
import { queueWith } from "./test-fixtures.js";

/** 2 modes × 1 scenario × 40 repetitions on the simulated model: 80 quick runs. */
const SUITE = Suite.parse({
  name: "renewals",
  matrix: { modes: ["chat_agent_tools", "dual_agent"], chat_models: ["sim"] },
  repetitions: 40,
  concurrency: 4,
  scenarios: [{ id: "hello", category: "irrelevance", turns: [{ user: "hello" }] }],
});
const RUNS = 80;
const EXPERIMENT = "renewals-1";

let database: TestDatabase;
let store: PostgresSessionStore;
let queue: RunQueue;

beforeEach(async () => {
  database = await createTestDatabase();
  store = await PostgresSessionStore.open(database.url);
  queue = await openRunQueue(store);
  await publishExperiment({
    queue,
    store,
    suite: SUITE,
    experimentId: EXPERIMENT,
    repetitions: SUITE.repetitions,
    retryErrors: false,
  });
});
afterEach(async () => {
  await queue.close();
  await store.close();
  await database.drop();
});

/**
 * The queue as a loaded server answers it: the lease renewal's UPDATE reads the table at once,
 * its answer arrives `delayMs` later, after the lanes have claimed (and started) other runs.
 */
function slowRenewals(inner: RunQueue, delayMs: number): RunQueue {
  return queueWith(inner, (queue) => ({
    renew: async (...args) => {
      const held = await queue.renew(...args);
      await sleep(delayMs);
      return held;
    },
  }));
}

describe("runWorker on PostgreSQL", () => {
  it("keeps a run claimed while a renewal was under way: no run is cancelled and left claimed (the 2-worker hang)", async () => {
    const providers = createLabProviders();
    const stop = new AbortController();
    // Before the fix, a run claimed during a renewal was missing from its answer, cancelled as
    // "lost" right after its session was made, and left claimed by this worker, which renewed it
    // for ever: the worker never ended. Bounded here so the failure is a failure, not a hang.
    const bounded = setTimeout(() => stop.abort(new Error("the worker did not finish")), 30_000);
    let outcome: WorkerOutcome;
    try {
      outcome = await runWorker({
        queue: slowRenewals(queue, 500),
        store,
        providers,
        experimentId: EXPERIMENT,
        suite: SUITE,
        concurrency: 4,
        // A renewal every second, each answered half a second late: many runs start meanwhile.
        leaseMs: 3000,
        signal: stop.signal,
      });
    } finally {
      clearTimeout(bounded);
      await providers.tools.close();
    }
    expect(stop.signal.aborted, "the worker did not finish").toBe(false);
    expect(outcome.errors).toEqual([]);
    expect(outcome.lost).toBe(0);
    expect(outcome.released).toBe(0);
    expect(outcome.ran).toBe(RUNS);
    const counts = await queue.counts(EXPERIMENT);
    expect(counts).toMatchObject({ total: RUNS, done: RUNS, claimed: 0, pending: 0 });
    const runs = await findExperimentRuns(store, EXPERIMENT);
    expect(runs.filter((run) => run.complete)).toHaveLength(RUNS);
    expect(runs).toHaveLength(RUNS);
  });

  it("ends a run the renewal misses while the queue still has it claimed here as an error, not a renewed-for-ever claim", async () => {
    // Slow runs (one turn of about a second), so renewals come while runs run.
    const slow = Suite.parse({
      ...SUITE,
      config: { chat_agent: { options: { tokens_per_second: 30 } } },
      repetitions: 2,
    });
    const experimentId = "renewals-2";
    await publishExperiment({
      queue,
      store,
      suite: slow,
      experimentId,
      repetitions: 2,
      retryErrors: false,
    });
    // A renewal whose answer lists nothing: every running run looks lost, yet none is another's.
    const blind = queueWith(queue, () => ({ renew: async () => new Set<string>() }));
    const providers = createLabProviders();
    const stop = new AbortController();
    const bounded = setTimeout(() => stop.abort(new Error("the worker did not finish")), 30_000);
    let outcome: WorkerOutcome;
    try {
      outcome = await runWorker({
        queue: blind,
        store,
        providers,
        experimentId,
        suite: slow,
        concurrency: 4,
        leaseMs: 900,
        signal: stop.signal,
      });
    } finally {
      clearTimeout(bounded);
      await providers.tools.close();
    }
    expect(stop.signal.aborted, "the worker did not finish").toBe(false);
    expect(outcome.errors.length).toBeGreaterThan(0);
    for (const error of outcome.errors) {
      expect(error.message).toMatch(
        /^cancelled as a lost claim that this worker still held \(lost the claim on /,
      );
    }
    expect(outcome.ran + outcome.errors.length).toBe(4);
    expect(await queue.counts(experimentId)).toMatchObject({ total: 4, claimed: 0, pending: 0 });
  });

  it("rides out a database that goes away for a moment: every run ends once, and the worker finishes", async () => {
    const url = new URL(database.url);
    const relay = await TcpRelay.start(url.hostname, Number(url.port));
    url.port = String(relay.port);
    const relayed = await PostgresSessionStore.open(url.href);
    const relayedQueue = await openRunQueue(relayed);
    const slow = Suite.parse({
      ...SUITE,
      config: { chat_agent: { options: { tokens_per_second: 400 } } },
      repetitions: 6,
    });
    const experimentId = "outage-1";
    await publishExperiment({
      queue,
      store,
      suite: slow,
      experimentId,
      repetitions: 6,
      retryErrors: false,
    });
    const providers = createLabProviders();
    const outages: unknown[] = [];
    try {
      const working = runWorker({
        queue: relayedQueue,
        store: relayed,
        providers,
        experimentId,
        suite: slow,
        concurrency: 2,
        leaseMs: 3000,
        outageLimitMs: 20_000,
        onOutage: (error) => outages.push(error),
      });
      // A few runs in, the database goes away for a second and a half.
      for (let waited = 0; (await queue.counts(experimentId)).done < 3 && waited < 200; waited++) {
        await sleep(50);
      }
      await relay.down();
      await sleep(1_500);
      await relay.up();
      const outcome = await working;
      const counts = await queue.counts(experimentId);
      expect(counts).toMatchObject({ total: 12, claimed: 0, pending: 0 });
      expect(counts.done + counts.errors).toBe(12);
      // Each run key stands for one complete run, or one that could not run (a resume's to run).
      const complete = (await findExperimentRuns(store, experimentId)).filter(
        (run) => run.complete,
      );
      expect(new Set(complete.map((run) => run.tag.run_key)).size).toBe(complete.length);
      expect(complete.length).toBe(counts.done);
      // The outage is no result: no run counts a turn the database failed against its cell.
      expect(counts.failed).toBe(0);
      expect(
        complete.filter((run) => run.turns.some((turn) => turn.status !== "completed")),
      ).toEqual([]);
      expect(outcome.ran + outcome.errors.length).toBeLessThanOrEqual(12);
    } finally {
      await providers.tools.close();
      await relayedQueue.close();
      await relayed.close().catch(() => {});
      await relay.down();
    }
  }, 60_000);

  it("runs a run again, whole, when the database went away under it, instead of reporting it as one that could not run", async () => {
    // The server shutting down as two runs make their sessions: PostgreSQL's 57P01, raised by a
    // trigger for the first two inserts (a sequence: its count outlives the rolled-back insert).
    await store.pool.query(`
      CREATE SEQUENCE going_away;
      CREATE FUNCTION going_away() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('going_away') <= 2 THEN
          RAISE EXCEPTION 'terminating connection due to administrator command'
            USING ERRCODE = '57P01';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER going_away BEFORE INSERT ON sessions
        FOR EACH ROW EXECUTE FUNCTION going_away();`);
    await expectRunsAgain("away-1", store, [
      "the database refused the write: terminating connection due to administrator command (57P01)",
      "the database refused the write: terminating connection due to administrator command (57P01)",
    ]);
  });

  it("runs a run again when the connection broke under one of its turns: the turn's error event says the database went away", async () => {
    // The connection breaks as the first two turns write their end (no SQLSTATE: a socket error,
    // as node-postgres gives it). The run reads only the turn's events.
    const lost = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    let breaks = 2;
    const breaking = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        if (property !== "appendRecords") return value.bind(target);
        return async (...args: unknown[]) => {
          const ends = (args[1] as AppendRecordsOptions).complete_turn !== undefined;
          if (ends && breaks-- > 0) {
            throw new StorageError(
              "read ECONNRESET",
              null,
              { cause: lost },
              "the connection to the database failed",
            );
          }
          return value.apply(target, args);
        };
      },
    });
    await expectRunsAgain("broken-1", breaking, [
      "a turn of the run could not be recorded: the connection to the database failed: read ECONNRESET",
      "a turn of the run could not be recorded: the connection to the database failed: read ECONNRESET",
    ]);
  });
  it("retries the queue while the database refuses connections, and gives up with its error past the limit", async () => {
    const experimentId = EXPERIMENT;
    /** The queue with `claim` failing as a database that went away does, `failures` times. */
    const away = (failures: number): RunQueue => {
      let left = failures;
      return queueWith(queue, (inner) => ({
        claim: async (...args) => {
          if (left-- > 0) {
            throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
              code: "ECONNREFUSED",
            });
          }
          return inner.claim(...args);
        },
      }));
    };
    const providers = createLabProviders();
    try {
      const outages: unknown[] = [];
      const outcome = await runWorker({
        queue: away(3),
        store,
        providers,
        experimentId,
        suite: SUITE,
        concurrency: 1,
        leaseMs: 3000,
        onOutage: (error) => outages.push(error),
      });
      expect(outages).toHaveLength(3);
      expect(outcome.ran).toBe(RUNS);
      const refused = runWorker({
        queue: away(Number.POSITIVE_INFINITY),
        store,
        providers,
        experimentId,
        suite: SUITE,
        concurrency: 1,
        leaseMs: 3000,
        outageLimitMs: 300,
      });
      await expect(refused).rejects.toThrow("connect ECONNREFUSED");
    } finally {
      await providers.tools.close();
    }
  }, 60_000);

  it("a claim that went through while its answer was lost is given back, and the worker still finishes", async () => {
    let lost = 1;
    // The first claim commits, then its answer is lost, as when the database goes away just then.
    const losing = queueWith(queue, (inner) => ({
      claim: async (...args) => {
        const claimed = await inner.claim(...args);
        if (claimed !== null && lost-- > 0) {
          throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
        }
        return claimed;
      },
    }));
    const providers = createLabProviders();
    const stop = new AbortController();
    // Before the fix the stranded claim was renewed for ever and the worker never ended.
    const bounded = setTimeout(() => stop.abort(new Error("the worker did not finish")), 30_000);
    try {
      const outcome = await runWorker({
        queue: losing,
        store,
        providers,
        experimentId: EXPERIMENT,
        suite: SUITE,
        concurrency: 2,
        leaseMs: 3000,
        signal: stop.signal,
      });
      expect(stop.signal.aborted, "the worker did not finish").toBe(false);
      expect(outcome.ran).toBe(RUNS);
      const counts = await queue.counts(EXPERIMENT);
      expect(counts).toMatchObject({ total: RUNS, done: RUNS, claimed: 0, pending: 0 });
    } finally {
      clearTimeout(bounded);
      await providers.tools.close();
    }
  }, 60_000);
});

/**
 * A 6-run experiment worked by one worker on `workerStore`: every run ends done, once, after
 * the worker heard of the outages `outages` name (each run that met one ran again).
 */
async function expectRunsAgain(
  experimentId: string,
  workerStore: PostgresSessionStore,
  outages: string[],
): Promise<void> {
  const small = Suite.parse({ ...SUITE, repetitions: 3 });
  await publishExperiment({
    queue,
    store,
    suite: small,
    experimentId,
    repetitions: 3,
    retryErrors: false,
  });
  const providers = createLabProviders();
  const heard: unknown[] = [];
  let outcome: WorkerOutcome;
  try {
    outcome = await runWorker({
      queue,
      store: workerStore,
      providers,
      experimentId,
      suite: small,
      concurrency: 2,
      leaseMs: 3000,
      onOutage: (error) => heard.push(error),
    });
  } finally {
    await providers.tools.close();
  }
  expect(outcome.errors).toEqual([]);
  expect(outcome.ran).toBe(6);
  expect(heard.map((error) => (error as Error).message)).toEqual(outages);
  expect(await queue.counts(experimentId)).toMatchObject({ total: 6, done: 6, errors: 0 });
  const runs = await findExperimentRuns(store, experimentId);
  expect(runs.filter((run) => run.complete)).toHaveLength(6);
  expect(runs).toHaveLength(6);
}
