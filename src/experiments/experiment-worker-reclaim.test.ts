import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { createLabProviders } from "../composition/lab-providers.js";
import { Suite } from "../domain/experiment.js";
import type { RunQueue } from "../store/run-queue.js";
import { openRunQueue } from "../store/run-queue-open.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { findExperimentRuns } from "./experiment-runs.js";
import { runWorker, type WorkerOutcome } from "./experiment-worker.js";
import { publishExperiment } from "./queue-plan.js";
import { queueWith } from "./test-fixtures.js";

/**
 * A worker whose lease on a run lapsed while the run was still going (its renewals did not get
 * through: the database was away longer than the lease) and that claimed the run again itself,
 * in another lane. Before, the new attempt deleted the old one's session as stale, the old one
 * then failed with "session not found", and, the claim being this worker's, that failure ended
 * the run as "could not run" while the new attempt was running it.
 */

/** One run of two turns, each about a second (the sim at 40 tokens a second). */
const SUITE = Suite.parse({
  name: "reclaim",
  config: { chat_agent: { options: { tokens_per_second: 40 } } },
  matrix: { modes: ["chat_agent_tools"], chat_models: ["sim"] },
  repetitions: 1,
  concurrency: 2,
  scenarios: [
    {
      id: "two",
      category: "multi_turn",
      turns: [{ user: "tell me about agent labs" }, { user: "and about tool calls" }],
    },
  ],
});
const EXPERIMENT = "reclaim-1";

let folder: ReturnType<typeof temporaryDirectory>;
let store: SqliteSessionStore;
let queue: RunQueue;

beforeEach(async () => {
  folder = temporaryDirectory();
  store = new SqliteSessionStore(join(folder.path, "lab.sqlite3"));
  queue = await openRunQueue(store);
  await publishExperiment({
    queue,
    store,
    suite: SUITE,
    experimentId: EXPERIMENT,
    repetitions: 1,
    retryErrors: false,
  });
});
afterEach(async () => {
  await queue.close();
  store.close();
  folder.remove();
});

/** The queue with its renewals refused until `until` says otherwise. */
function failingRenewals(inner: RunQueue, until: () => boolean): RunQueue {
  return queueWith(inner, (queue) => ({
    renew: async (...args) => {
      if (!until()) throw new Error("the database is away");
      return queue.renew(...args);
    },
  }));
}

describe("a run this worker claims again after its own lease lapsed", () => {
  it("is run by the new attempt alone: the old one stops and does not end the run", async () => {
    const providers = createLabProviders();
    const started = performance.now();
    // Renewals fail for the first 1.5 s: the 600 ms lease lapses while the run's first turn runs,
    // and the worker's other lane claims the run again.
    const away = failingRenewals(queue, () => performance.now() - started > 1500);
    const stop = new AbortController();
    const bounded = setTimeout(() => stop.abort(new Error("the worker did not finish")), 30_000);
    let outcome: WorkerOutcome;
    try {
      outcome = await runWorker({
        queue: away,
        store,
        providers,
        experimentId: EXPERIMENT,
        suite: SUITE,
        concurrency: 2,
        leaseMs: 600,
        signal: stop.signal,
      });
    } finally {
      clearTimeout(bounded);
      await providers.tools.close();
    }
    expect(stop.signal.aborted, "the worker did not finish").toBe(false);
    expect(outcome.errors).toEqual([]);
    expect(outcome.lost).toBeGreaterThanOrEqual(1);
    expect(outcome.ran).toBe(1);
    expect(await queue.counts(EXPERIMENT)).toMatchObject({ total: 1, done: 1, errors: 0 });
    const runs = await findExperimentRuns(store, EXPERIMENT);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.complete).toBe(true);
    expect(runs[0]?.turns.map((turn) => turn.status)).toEqual(["completed", "completed"]);
    expect(store.listSessions()).toHaveLength(1);
  });

  it("an earlier attempt whose attach lands after the new one's: its session is not the run's, and no second run is made", async () => {
    let attaches = 0;
    let releaseFirst: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let away = true;
    const late = queueWith(queue, (inner) => ({
      renew: async (...args) => {
        if (away) throw new Error("the database is away");
        return inner.renew(...args);
      },
      attach: async (...args) => {
        attaches += 1;
        if (attaches === 1) {
          // Sent while the database is away; it gets through after the claim again.
          await firstHeld;
          return inner.attach(...args);
        }
        const attached = await inner.attach(...args);
        away = false;
        setTimeout(releaseFirst, 20);
        return attached;
      },
    }));

    const providers = createLabProviders();
    let outcome: WorkerOutcome;
    try {
      outcome = await runWorker({
        queue: late,
        store,
        providers,
        experimentId: EXPERIMENT,
        suite: SUITE,
        concurrency: 2,
        leaseMs: 300,
      });
    } finally {
      await providers.tools.close();
    }
    expect(attaches).toBe(2);
    expect(outcome.errors).toEqual([]);
    expect(outcome.ran).toBe(1);
    const runs = await findExperimentRuns(store, EXPERIMENT);
    expect(runs).toHaveLength(1);
    expect(store.listSessions()).toHaveLength(1);
    expect(await queue.sessionOf(EXPERIMENT, runs[0]?.tag.run_key as string)).toBe(
      runs[0]?.session.id,
    );
  });
});

/**
 * A worker stopped (SIGTERM under `bench --workers`) just after it claimed a run that an earlier,
 * stopped attempt had left unfinished. Its attach named its own session in the queue in place of
 * the earlier one's, and the stop ended the attempt before it deleted the earlier session: no
 * one knew of that session any more, and the run, once run by the next worker, had two (seen
 * once in `bench-workers-postgres.test.ts` under a loaded clean-clone run: a stopped bench's two
 * workers, one giving a run back as the other claimed it).
 */

/** A worker of the experiment until `signal` stops it (or the experiment is done). */
async function work(workerQueue: RunQueue, signal?: AbortSignal) {
  const providers = createLabProviders();
  try {
    return await runWorker({
      queue: workerQueue,
      store,
      providers,
      experimentId: EXPERIMENT,
      suite: SUITE,
      concurrency: 1,
      leaseMs: 30_000,
      ...(signal === undefined ? {} : { signal }),
    });
  } finally {
    await providers.tools.close();
  }
}

describe("a worker stopped right after it claimed a run an earlier attempt left unfinished", () => {
  it("deletes that attempt's session first: the run ends with one session, its own", async () => {
    // The first worker is stopped during the run's first turn: it gives the run back, its
    // session (one cancelled turn) named in the queue for the next claimer to delete.
    const first = new AbortController();
    const stopFirst = setInterval(() => {
      if (store.listSessions().length > 0) first.abort(new Error("SIGTERM"));
    }, 20);
    try {
      await work(queue, first.signal);
    } finally {
      clearInterval(stopFirst);
    }
    const [left] = store.listSessions();
    expect(left).toBeDefined();
    const runKey = (await findExperimentRuns(store, EXPERIMENT))[0]?.tag.run_key as string;
    expect(await queue.sessionOf(EXPERIMENT, runKey)).toBe(left?.id);

    // The second worker's stop arrives as its attach is answered.
    const second = new AbortController();
    const stoppedAtAttach = queueWith(queue, (inner) => ({
      attach: async (...args) => {
        const attached = await inner.attach(...args);
        second.abort(new Error("SIGTERM"));
        return attached;
      },
    }));
    await work(stoppedAtAttach, second.signal);
    expect(second.signal.aborted).toBe(true);
    expect(store.getSession(left?.id as string)).toBeNull();

    // A third runs it: one session for the run, complete.
    const third = await work(queue);
    expect(third).toMatchObject({ ran: 1, errors: [] });
    const runs = await findExperimentRuns(store, EXPERIMENT);
    expect(runs.map((run) => [run.tag.run_key, run.complete])).toEqual([[runKey, true]]);
    expect(store.listSessions()).toHaveLength(1);
  });
});
