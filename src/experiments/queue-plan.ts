import type { Suite } from "../domain/experiment.js";
import type { RunQueue } from "../store/run-queue.js";
import type { SessionStore } from "../store/session-store.js";
import { experimentSlices, storedRunsOf } from "./experiment-runs.js";
import { plannedRuns } from "./run-plan.js";
import { expandCells } from "./suite.js";

export interface PublishOptions {
  queue: RunQueue;
  store: SessionStore;
  suite: Suite;
  suiteFile?: string | undefined;
  experimentId: string;
  repetitions: number;
  /** Runs that could not run go back to pending (a new `bench`; a joining worker leaves them). */
  retryErrors: boolean;
}

/**
 * Puts an experiment's plan in the queue, from any worker, as often as it likes: the suite (what a
 * worker joining with only the experiment id runs), one row per planned run (inserted when
 * missing), and the store's truth, which wins over the queue's: a run complete in the store is
 * done (resume skips it), a done run whose session is gone or incomplete runs again, and an
 * unfinished session of a pending run is handed to its next claimer, who deletes it.
 *
 * The queue's done runs are read before the store: a worker stores the whole session before it
 * records the run done, so a done run read here has its session in the store read after it, and a
 * session finishing meanwhile is never mistaken for a missing one.
 */
export async function publishExperiment(options: PublishOptions): Promise<void> {
  const { queue, store, suite, experimentId } = options;
  await queue.saveExperiment({
    experiment_id: experimentId,
    suite,
    suite_file: options.suiteFile ?? null,
  });
  const cells = expandCells(suite);
  let seq = 0;
  await queue.addRuns(
    experimentId,
    (function* () {
      for (const run of plannedRuns(suite, cells, options.repetitions)) {
        yield {
          run_key: run.run_key,
          seq: seq++,
          cell: run.cell.id,
          scenario: run.scenario.id,
          repetition: run.repetition,
        };
      }
    })(),
  );
  const done = await queue.doneRuns(experimentId);
  const complete = new Map<string, string>();
  const completeIds = new Set<string>();
  const stale = new Map<string, string>();
  for await (const slice of experimentSlices(store, experimentId)) {
    for (const run of storedRunsOf(slice, experimentId)) {
      if (run.complete) {
        completeIds.add(run.session.id);
        if (!complete.has(run.tag.run_key)) complete.set(run.tag.run_key, run.session.id);
      } else if (!stale.has(run.tag.run_key)) {
        stale.set(run.tag.run_key, run.session.id);
      }
    }
  }
  const entries = (map: Map<string, string>) =>
    [...map].map(([run_key, session_id]) => ({ run_key, session_id }));
  await queue.reconcile(experimentId, {
    stored: entries(complete).filter((run) => !done.has(run.run_key)),
    reopened: [...done]
      .filter(([key, sessionId]) =>
        sessionId === null ? !complete.has(key) : !completeIds.has(sessionId),
      )
      .map(([run_key, session_id]) => ({ run_key, session_id })),
    stale: entries(stale).filter((run) => !complete.has(run.run_key)),
    retry_errors: options.retryErrors,
  });
}
