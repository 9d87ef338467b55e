import type { TurnProviders } from "../runtime/turn-providers.js";
import type { ExperimentProgress } from "./progress.js";
import { type PublishOptions, publishExperiment } from "./queue-plan.js";
import { progressOf, watchQueue } from "./queue-progress.js";
import { type ExperimentOutcome, suiteReport } from "./run-experiment.js";
import { checkCells } from "./run-plan.js";
import { expandCells } from "./suite.js";
import { startWorkerProcesses } from "./worker-processes.js";

/** What the coordinator publishes, and with it: a new `bench` always sends errored runs back to pending. */
export interface QueuedExperimentOptions extends Omit<PublishOptions, "retryErrors"> {
  /** The coordinator checks every cell before a worker starts (each worker checks again). */
  providers: TurnProviders;
  /** Local worker processes to start. */
  workers: number;
  /** A worker's command line after the node binary, and its environment. */
  workerArgs: readonly string[];
  workerEnv: Readonly<Record<string, string | undefined>>;
  /** Gives the workers SIGTERM: they hand back their runs and exit. */
  signal: AbortSignal;
  onProgress(progress: ExperimentProgress): void;
  /** Lines for the user: a worker started or died, what a worker printed. */
  onNote(line: string): void;
  keep_runs: boolean;
}

export interface QueuedExperimentOutcome extends ExperimentOutcome {
  /** Runs neither done nor failed when the workers were gone (all died or were stopped). */
  unfinished: number;
  /** Runs claimed more than once (a worker died or gave them back). */
  reclaimed: number;
}

/** How often the coordinator reads the queue for its progress line. */
const PROGRESS_INTERVAL_MS = 500;

/**
 * `bench --workers N`: plans the experiment into the queue, starts N local workers on it, shows
 * the experiment's progress as the database has it (so also the runs of workers elsewhere), and
 * once its workers are gone builds the report from the store.
 */
export async function runQueuedExperiment(
  options: QueuedExperimentOptions,
): Promise<QueuedExperimentOutcome> {
  const { queue, store, suite, experimentId } = options;
  const cells = expandCells(suite);
  await checkCells({ suite, experimentId, suiteFile: options.suiteFile }, cells, options.providers);
  await publishExperiment({ ...options, retryErrors: true });
  const start = await queue.counts(experimentId);
  const skipped = start.done;
  options.onProgress(progressOf({ ...start, last: null }, skipped, cells));
  if (start.pending + start.claimed > 0 && !options.signal.aborted) {
    const pool = startWorkerProcesses({
      count: options.workers,
      args: options.workerArgs,
      env: options.workerEnv,
      onLine: (index, line) => options.onNote(`worker ${index}: ${line}`),
    });
    for (const worker of pool.workers) {
      options.onNote(`worker ${worker.index} started (pid ${worker.pid})`);
    }
    const stop = () => pool.signal("SIGTERM");
    options.signal.addEventListener("abort", stop, { once: true });
    // A line only when a run ended: the reading repeats while the runs run.
    let shown = start.done + start.errors;
    const watcher = watchQueue(queue, experimentId, PROGRESS_INTERVAL_MS, (counts) => {
      if (counts.done + counts.errors === shown) return;
      shown = counts.done + counts.errors;
      options.onProgress(progressOf(counts, skipped, cells));
    });
    await Promise.all(
      pool.workers.map(async (worker) => {
        const { code, signal } = await worker.exited;
        if (signal !== null) {
          options.onNote(`worker ${worker.index} (pid ${worker.pid}) was ended by ${signal}`);
        } else if (code !== 0 && code !== 130 && code !== 143) {
          options.onNote(`worker ${worker.index} (pid ${worker.pid}) exited with code ${code}`);
        }
      }),
    );
    options.signal.removeEventListener("abort", stop);
    await watcher.stop();
  }
  const end = await queue.counts(experimentId);
  const errors = await queue.errors(experimentId, end.errors);
  const report = await suiteReport(store, experimentId, suite, options.keep_runs);
  const unfinished = end.pending + end.claimed;
  return {
    experiment_id: experimentId,
    total: end.total,
    skipped,
    finished: end.done,
    stopped: options.signal.aborted && unfinished > 0,
    errors,
    report,
    unfinished,
    reclaimed: end.reclaimed,
  };
}
