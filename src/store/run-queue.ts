/**
 * The run queue: an experiment's runs as rows in the lab's own database, claimed by workers with
 * leases, so any number of processes on any number of hosts share one experiment. The sessions
 * stay in the session store; the queue only says who runs what and what is done.
 *
 * A row is `pending`, `claimed` (by one worker until `lease_until`; a lapsed lease may be claimed
 * by anyone), `done` (finished exactly once: recorded only by the worker that still holds it) or
 * `error` (could not run at all; a new `bench` puts it back to pending).
 */

/** What a worker needs to run an experiment it did not plan: stored with the experiment. */
export interface QueuedExperiment {
  experiment_id: string;
  /** The suite as loaded (JSON); the worker validates it again. */
  suite: unknown;
  suite_file: string | null;
}

/** One planned run. `seq` is its place in the plan: runs are claimed in that order. */
export interface PlannedRunRow {
  run_key: string;
  seq: number;
  cell: string;
  scenario: string;
  repetition: number;
}

export interface ClaimedRun {
  run_key: string;
  cell: string;
  scenario: string;
  repetition: number;
  /** 1 for the first claim; more when an earlier holder gave it back or its lease lapsed. */
  attempt: number;
  /** The session of the last attempt (unfinished), to reuse when complete or delete. */
  previous_session: string | null;
}

export type RunOutcome = "finished" | "failed";

export interface QueueCounts {
  total: number;
  pending: number;
  claimed: number;
  done: number;
  /** Done runs with a failed turn. */
  failed: number;
  /** Runs that could not run at all. */
  errors: number;
  /** Runs claimed more than once (a worker stopped or lost its lease). */
  reclaimed: number;
  /** The run finished last, or null. */
  last: { run_key: string; cell: string; scenario: string; repetition: number } | null;
  /** Milliseconds until the earliest lease of a claimed run lapses (<= 0: lapsed), or null. */
  next_expiry_ms: number | null;
}

export interface RunError {
  run_key: string;
  message: string;
}

/** How `publish` brings the queue in line with the session store (see queue-plan.ts). */
export interface Reconciliation {
  /** Pending or error runs complete in the store: done, with that session. */
  stored: { run_key: string; session_id: string }[];
  /** Done runs whose session is no longer complete in the store: pending again. */
  reopened: { run_key: string; session_id: string | null }[];
  /** An unfinished session of a pending run, for its next claimer to delete. */
  stale: { run_key: string; session_id: string }[];
  /** Runs that could not run go back to pending. */
  retry_errors: boolean;
}

export interface RunQueue {
  /** Stores (or replaces) the experiment's plan. */
  saveExperiment(experiment: QueuedExperiment): Promise<void>;
  readExperiment(experimentId: string): Promise<QueuedExperiment | null>;
  /** Inserts the runs not yet there (any worker may; a row already there is left as it is). */
  addRuns(experimentId: string, runs: Iterable<PlannedRunRow>): Promise<number>;
  /** The done runs' sessions, read before the store (see queue-plan.ts). */
  doneRuns(experimentId: string): Promise<Map<string, string | null>>;
  reconcile(experimentId: string, changes: Reconciliation): Promise<void>;
  /** The next pending run (a lapsed lease first), claimed for `leaseMs`; null when none. */
  claim(experimentId: string, worker: string, leaseMs: number): Promise<ClaimedRun | null>;
  /**
   * Records the attempt's session before it is made; false when the claim was lost. `attempt`
   * (the claim's, ClaimedRun.attempt), here and in `finish` and `fail`: a later claim of the run
   * by the same worker (its own lease lapsed) makes an earlier attempt's call change nothing.
   */
  attach(
    experimentId: string,
    runKey: string,
    worker: string,
    sessionId: string,
    attempt?: number,
  ): Promise<boolean>;
  /** Extends every lease the worker holds; returns the run keys it still holds. */
  renew(experimentId: string, worker: string, leaseMs: number): Promise<Set<string>>;
  /** Done, only while this worker holds the run: false (nothing changed) otherwise. */
  finish(
    experimentId: string,
    runKey: string,
    worker: string,
    outcome: RunOutcome,
    attempt?: number,
  ): Promise<boolean>;
  /** Could not run, only while this worker holds it. */
  fail(
    experimentId: string,
    runKey: string,
    worker: string,
    message: string,
    attempt?: number,
  ): Promise<boolean>;
  /** The session the run's row names now (the current attempt's, or the one it was done with). */
  sessionOf(experimentId: string, runKey: string): Promise<string | null>;
  /** Gives the worker's claimed runs back (pending, their session kept for the next claimer). */
  release(experimentId: string, worker: string): Promise<number>;
  counts(experimentId: string): Promise<QueueCounts>;
  /** The error runs' messages, at most `limit`. */
  errors(experimentId: string, limit: number): Promise<RunError[]>;
  close(): Promise<void>;
}

/** Rows a batch insert sends at once. */
export const RUN_INSERT_BATCH = 1000;

/** Chunks of an iterable, so a plan of 50,000 runs is never one array. */
export function* chunksOf<Item>(items: Iterable<Item>, size: number): Generator<Item[]> {
  let batch: Item[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
