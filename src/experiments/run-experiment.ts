import { randomUUID } from "node:crypto";
import { setImmediate as nextTurnOfEventLoop } from "node:timers/promises";
import { z } from "zod";
import type { Cell, ExperimentReport, Suite } from "../domain/experiment.js";
import { parseInput } from "../domain/validation.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import type { RunError } from "../store/run-queue.js";
import type { SessionStore } from "../store/session-store.js";
import { experimentSlices, storedRunsOf } from "./experiment-runs.js";
import type { ExperimentProgress } from "./progress.js";
import { buildExperimentReport } from "./report-build.js";
import { executeRun, type RunEnd, type RunExecution } from "./run-execution.js";
import { checkCells, labelOf, type PlannedRun, plannedRuns } from "./run-plan.js";
import { expandCells, experimentIdOf } from "./suite.js";

export interface RunExperimentOptions {
  store: SessionStore;
  suite: Suite;
  /** Where the suite came from; recorded in each run's tag. */
  suiteFile?: string;
  /**
   * Each cell's place in the suite the runs belong to, when `suite` is a part of it (the server
   * runs chosen cells one suite each): the runs' tags carry it, so a report lists cells in it.
   */
  cellOrder?: ReadonlyMap<string, number>;
  /** Default: `experimentIdOf(suite)`. Running again with the same id resumes. */
  experimentId?: string;
  /** Runs at once; default the suite's `concurrency`. */
  concurrency?: number;
  /** Default the suite's `repetitions`. */
  repetitions?: number;
  /** Stops starting runs and cancels the running ones; what finished is kept and reported. */
  signal?: AbortSignal;
  /** Called once the plan is known (done = skipped), then after every finished run. */
  onProgress?: (progress: ExperimentProgress) => void;
  /** Where models and tools come from (`createLabProviders`). */
  providers: TurnProviders;
  /**
   * Default true: the report lists every run. False: its `runs` is empty and each run is folded
   * into its cell's summary as it is read, so memory stays flat however many runs there are.
   */
  keep_runs?: boolean;
}

export type { RunError };

export interface ExperimentOutcome {
  experiment_id: string;
  /** Planned runs: cells × scenarios × repetitions. */
  total: number;
  /** Runs already complete in the store, not run again. */
  skipped: number;
  /** Planned runs finished, this time or earlier (skipped included). */
  finished: number;
  /** The signal stopped the experiment before every run finished. */
  stopped: boolean;
  /** Runs that could not run at all (left incomplete, so a resume retries them). */
  errors: RunError[];
  /** Every finished run of the experiment, earlier ones included, scored (see `keep_runs`). */
  report: ExperimentReport;
}

const Counts = z.strictObject({
  concurrency: z.number().int().min(1).max(64),
  repetitions: z.number().int().min(1).max(1000),
});

/**
 * Runs a suite: every cell × scenario × repetition is one session whose turns run in order, a few
 * sessions at a time. Runs already complete in the store are skipped (resume); incomplete ones
 * are replaced by a new session. Then every finished run of the experiment is scored into a report.
 */
export async function runExperiment(options: RunExperimentOptions): Promise<ExperimentOutcome> {
  const { store, suite, signal } = options;
  const counts = parseInput(
    Counts,
    {
      concurrency: options.concurrency ?? suite.concurrency,
      repetitions: options.repetitions ?? suite.repetitions,
    },
    "runExperiment",
  );
  const experimentId = options.experimentId ?? experimentIdOf(suite);
  const order = options.cellOrder;
  const cells = expandCells(suite).map((cell): Cell => {
    const place = order?.get(cell.id);
    return place === undefined ? cell : { ...cell, order: place };
  });
  const planned = () => plannedRuns(suite, cells, counts.repetitions);
  const context: RunExecution = {
    store,
    suite,
    experimentId,
    suiteFile: options.suiteFile,
    providers: options.providers,
    signal,
  };
  await checkCells(context, cells, options.providers);

  // Nothing here grows with the runs' rows: the store is read a slice at a time, and what stays
  // is each finished run key and the session ids of unfinished attempts (deleted on retry).
  const completeKeys = new Set<string>();
  const stale = new Map<string, string[]>();
  for await (const slice of experimentSlices(store, experimentId)) {
    for (const run of storedRunsOf(slice, experimentId)) {
      if (run.complete) completeKeys.add(run.tag.run_key);
      else stale.set(run.tag.run_key, [...(stale.get(run.tag.run_key) ?? []), run.session.id]);
    }
  }
  let total = 0;
  let skipped = 0;
  for (const run of planned()) {
    total += 1;
    if (completeKeys.has(run.run_key)) skipped += 1;
  }
  function* pending(): Generator<PlannedRun> {
    for (const run of planned()) if (!completeKeys.has(run.run_key)) yield run;
  }

  const progress: ExperimentProgress = {
    done: skipped,
    total,
    skipped,
    failed_runs: 0,
    current: null,
  };
  options.onProgress?.({ ...progress });
  const errors: RunError[] = [];
  await runPool(pending(), counts.concurrency, signal, async (run) => {
    let end: RunEnd;
    try {
      end = await executeRun(run, randomUUID(), stale.get(run.run_key) ?? [], context);
    } catch (error) {
      errors.push({
        run_key: run.run_key,
        message: error instanceof Error ? error.message : String(error),
      });
      end = "failed";
    }
    if (end === "cancelled") return;
    progress.done += 1;
    if (end === "failed") progress.failed_runs += 1;
    const label = labelOf(run);
    progress.current = label;
    options.onProgress?.({ ...progress, current: { ...label } });
  });

  const report = await suiteReport(store, experimentId, suite, options.keep_runs ?? true);
  return {
    experiment_id: experimentId,
    total,
    skipped,
    finished: progress.done - errors.length,
    stopped: signal?.aborted === true && progress.done < total,
    errors,
    report,
  };
}

/** At most `limit` workers; none starts once the signal is aborted. */
async function runPool<Item>(
  items: Iterator<Item>,
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: Item) => Promise<void>,
): Promise<void> {
  const lane = async () => {
    while (signal?.aborted !== true) {
      const next = items.next();
      if (next.done === true) return;
      await work(next.value);
      // A run on the simulated model never waits for I/O, so without this the whole experiment
      // is one chain of promises: Ctrl-C (a signal is an event-loop callback) would go unheard
      // until the last run, and so would timers and V8's own GC tasks.
      await nextTurnOfEventLoop();
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
}

/** Every finished run of the experiment, scored, in the suite's order of cells and scenarios. */
export function suiteReport(
  store: SessionStore,
  experimentId: string,
  suite: Suite,
  keepRuns: boolean,
): Promise<ExperimentReport> {
  return buildExperimentReport({
    store,
    experiment_id: experimentId,
    suite: suite.name,
    cells: expandCells(suite),
    scenarios: suite.scenarios.map((scenario) => scenario.id),
    prices: suite.prices,
    keep_runs: keepRuns,
  });
}
