import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { createLabProviders } from "../composition/lab-providers.js";
import { Suite } from "../domain/experiment.js";
import type { RunQueue } from "../store/run-queue.js";
import { openRunQueue } from "../store/run-queue-open.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { findExperimentRuns } from "./experiment-runs.js";
import { runWorker } from "./experiment-worker.js";
import { publishExperiment } from "./queue-plan.js";
import { queueWith } from "./test-fixtures.js";

/**
 * A worker stopped (SIGTERM under `bench --workers`) just after it claimed a run that an earlier,
 * stopped attempt had left unfinished. Its attach named its own session in the queue in place of
 * the earlier one's, and the stop ended the attempt before it deleted the earlier session: no
 * one knew of that session any more, and the run, once run by the next worker, had two (seen
 * once in `bench-workers-postgres.test.ts` under a loaded clean-clone run: a stopped bench's two
 * workers, one giving a run back as the other claimed it).
 */

/** One run of two turns, each about a second (the sim at 40 tokens a second). */
const SUITE = Suite.parse({
  name: "stopped",
  config: { chat_agent: { options: { tokens_per_second: 40 } } },
  matrix: { modes: ["chat_agent_tools"], chat_models: ["sim"] },
  repetitions: 1,
  concurrency: 1,
  scenarios: [
    {
      id: "two",
      category: "multi_turn",
      turns: [{ user: "tell me about agent labs" }, { user: "and about tool calls" }],
    },
  ],
});
const EXPERIMENT = "stopped-1";

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
