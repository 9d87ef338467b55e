import type { Cell } from "../domain/experiment.js";
import type { QueueCounts, RunQueue } from "../store/run-queue.js";
import type { ExperimentProgress } from "./progress.js";

/**
 * A queued experiment's progress as the database has it: every worker's runs, on any host.
 * `skipped` is what was done before this watcher started.
 */
export function progressOf(
  counts: QueueCounts,
  skipped: number,
  cells: readonly Cell[],
): ExperimentProgress {
  const last = counts.last;
  const cell = last === null ? undefined : cells.find((candidate) => candidate.id === last.cell);
  return {
    done: counts.done + counts.errors,
    total: counts.total,
    skipped,
    failed_runs: counts.failed + counts.errors,
    current:
      last === null
        ? null
        : {
            run_key: last.run_key,
            cell: last.cell,
            cell_label: cell?.label ?? last.cell,
            scenario: last.scenario,
            repetition: last.repetition,
          },
  };
}

/**
 * Reads the queue's counts every `intervalMs` and hands on the progress, until stopped; the last
 * reading is taken when stopped, so the final line is the final state. A reading that fails (the
 * database restarting) is skipped and the next one tries again; only the last one's failure is
 * thrown, by `stop`.
 */
export function watchQueue(
  queue: RunQueue,
  experimentId: string,
  intervalMs: number,
  onCounts: (counts: QueueCounts) => void,
): { stop(): Promise<void> } {
  let reading: Promise<unknown> = Promise.resolve(null);
  // Each reading's own failure is caught where it is made: one left for the next reading to
  // catch was an unhandled rejection until then, which ends the process.
  const read = () => {
    reading = reading.then(() =>
      queue.counts(experimentId).then(
        (counts) => {
          onCounts(counts);
          return null;
        },
        (error: unknown) => ({ error }),
      ),
    );
  };
  const timer = setInterval(read, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      read();
      const last = await reading;
      if (last !== null && typeof last === "object" && "error" in last) throw last.error;
    },
  };
}
