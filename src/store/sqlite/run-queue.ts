import Database from "better-sqlite3";
import {
  type ClaimedRun,
  chunksOf,
  type PlannedRunRow,
  type QueueCounts,
  type QueuedExperiment,
  type Reconciliation,
  RUN_INSERT_BATCH,
  type RunError,
  type RunOutcome,
  type RunQueue,
} from "../run-queue.js";
import { BUSY_TIMEOUT_MS } from "./open-database.js";

/**
 * The run queue in the lab's SQLite file, on a connection of its own (the store's is synchronous
 * and busy with sessions). Every change is a BEGIN IMMEDIATE transaction: SQLite lets one writer
 * at a time in, so two processes claiming at once are serialized and never take the same run.
 * Leases are this host's clock in milliseconds: a SQLite file is shared by local processes only.
 * The tables live beside the store's and outside its schema versions: created when missing.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS queued_experiments (
  experiment_id TEXT PRIMARY KEY,
  plan TEXT NOT NULL,
  updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS queued_runs (
  experiment_id TEXT NOT NULL,
  run_key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  cell TEXT NOT NULL,
  scenario TEXT NOT NULL,
  repetition INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'claimed', 'done', 'error')),
  worker TEXT,
  lease_until REAL,
  attempts INTEGER NOT NULL DEFAULT 0,
  session_id TEXT,
  outcome TEXT,
  error TEXT,
  finished_at REAL,
  PRIMARY KEY (experiment_id, run_key)
);
CREATE INDEX IF NOT EXISTS queued_runs_by_state ON queued_runs (experiment_id, state, seq);
CREATE INDEX IF NOT EXISTS queued_runs_by_finish ON queued_runs (experiment_id, finished_at);
`;

/** Milliseconds with a fraction: two runs ending in one millisecond still have an order. */
const now = () => performance.timeOrigin + performance.now();

interface ClaimRow {
  run_key: string;
  cell: string;
  scenario: string;
  repetition: number;
  attempts: number;
  session_id: string | null;
}

export class SqliteRunQueue implements RunQueue {
  readonly #db: Database.Database;

  constructor(path: string) {
    this.#db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    this.#db.pragma("synchronous = NORMAL");
    this.#db.transaction(() => this.#db.exec(SCHEMA)).immediate();
  }

  async saveExperiment(experiment: QueuedExperiment): Promise<void> {
    const plan = JSON.stringify({ suite: experiment.suite, suite_file: experiment.suite_file });
    this.#db
      .prepare(
        `INSERT INTO queued_experiments (experiment_id, plan, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (experiment_id) DO UPDATE SET plan = excluded.plan, updated_at = excluded.updated_at`,
      )
      .run(experiment.experiment_id, plan, now());
  }

  async readExperiment(experimentId: string): Promise<QueuedExperiment | null> {
    const plan = this.#db
      .prepare("SELECT plan FROM queued_experiments WHERE experiment_id = ?")
      .pluck()
      .get(experimentId) as string | undefined;
    if (plan === undefined) return null;
    const parsed = JSON.parse(plan) as { suite: unknown; suite_file?: string | null };
    return {
      experiment_id: experimentId,
      suite: parsed.suite,
      suite_file: parsed.suite_file ?? null,
    };
  }

  async addRuns(experimentId: string, runs: Iterable<PlannedRunRow>): Promise<number> {
    const insert = this.#db.prepare(
      `INSERT INTO queued_runs (experiment_id, run_key, seq, cell, scenario, repetition)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    const batch = this.#db.transaction((rows: PlannedRunRow[]) => {
      let added = 0;
      for (const row of rows) {
        added += insert.run(
          experimentId,
          row.run_key,
          row.seq,
          row.cell,
          row.scenario,
          row.repetition,
        ).changes;
      }
      return added;
    });
    let added = 0;
    for (const rows of chunksOf(runs, RUN_INSERT_BATCH)) added += batch.immediate(rows);
    return added;
  }

  async doneRuns(experimentId: string): Promise<Map<string, string | null>> {
    const rows = this.#db
      .prepare(
        "SELECT run_key, session_id FROM queued_runs WHERE experiment_id = ? AND state = 'done'",
      )
      .raw()
      .all(experimentId) as [string, string | null][];
    return new Map(rows);
  }

  async reconcile(experimentId: string, changes: Reconciliation): Promise<void> {
    const stored = this.#db.prepare(
      `UPDATE queued_runs SET state = 'done', outcome = 'stored', session_id = ?, worker = NULL,
         lease_until = NULL, error = NULL, finished_at = ?
       WHERE experiment_id = ? AND run_key = ? AND state IN ('pending', 'error')`,
    );
    const reopened = this.#db.prepare(
      `UPDATE queued_runs SET state = 'pending', outcome = NULL, session_id = NULL, finished_at = NULL
       WHERE experiment_id = ? AND run_key = ? AND state = 'done' AND session_id IS ?`,
    );
    const stale = this.#db.prepare(
      `UPDATE queued_runs SET session_id = ?
       WHERE experiment_id = ? AND run_key = ? AND state = 'pending' AND session_id IS NULL`,
    );
    this.#db
      .transaction(() => {
        const at = now();
        for (const run of changes.stored) stored.run(run.session_id, at, experimentId, run.run_key);
        for (const run of changes.reopened) reopened.run(experimentId, run.run_key, run.session_id);
        for (const run of changes.stale) stale.run(run.session_id, experimentId, run.run_key);
        if (changes.retry_errors) {
          this.#db
            .prepare(
              `UPDATE queued_runs SET state = 'pending', error = NULL, worker = NULL
               WHERE experiment_id = ? AND state = 'error'`,
            )
            .run(experimentId);
        }
      })
      .immediate();
  }

  async claim(experimentId: string, worker: string, leaseMs: number): Promise<ClaimedRun | null> {
    const lapsed = this.#db.prepare(
      `SELECT run_key, cell, scenario, repetition, attempts, session_id FROM queued_runs
       WHERE experiment_id = ? AND state = 'claimed' AND lease_until < ? ORDER BY lease_until LIMIT 1`,
    );
    const pending = this.#db.prepare(
      `SELECT run_key, cell, scenario, repetition, attempts, session_id FROM queued_runs
       WHERE experiment_id = ? AND state = 'pending' ORDER BY seq LIMIT 1`,
    );
    const take = this.#db.prepare(
      `UPDATE queued_runs SET state = 'claimed', worker = ?, lease_until = ?, attempts = attempts + 1
       WHERE experiment_id = ? AND run_key = ?`,
    );
    return this.#db
      .transaction((): ClaimedRun | null => {
        const at = now();
        const row = (lapsed.get(experimentId, at) ?? pending.get(experimentId)) as
          | ClaimRow
          | undefined;
        if (row === undefined) return null;
        take.run(worker, at + leaseMs, experimentId, row.run_key);
        return {
          run_key: row.run_key,
          cell: row.cell,
          scenario: row.scenario,
          repetition: row.repetition,
          attempt: row.attempts + 1,
          previous_session: row.session_id,
        };
      })
      .immediate();
  }

  async attach(
    experimentId: string,
    runKey: string,
    worker: string,
    sessionId: string,
    attempt?: number,
  ): Promise<boolean> {
    return (
      this.#db
        .prepare(
          `UPDATE queued_runs SET session_id = ?
           WHERE experiment_id = ? AND run_key = ? AND state = 'claimed' AND worker = ?
             AND (? IS NULL OR attempts = ?)`,
        )
        .run(sessionId, experimentId, runKey, worker, attempt ?? null, attempt ?? null).changes ===
      1
    );
  }

  async renew(experimentId: string, worker: string, leaseMs: number): Promise<Set<string>> {
    const keys = this.#db
      .prepare(
        `UPDATE queued_runs SET lease_until = ?
         WHERE experiment_id = ? AND worker = ? AND state = 'claimed' RETURNING run_key`,
      )
      .pluck()
      .all(now() + leaseMs, experimentId, worker) as string[];
    return new Set(keys);
  }

  async finish(
    experimentId: string,
    runKey: string,
    worker: string,
    outcome: RunOutcome,
    attempt?: number,
  ): Promise<boolean> {
    return this.#end(experimentId, runKey, { worker, attempt }, "done", outcome, null);
  }

  async fail(
    experimentId: string,
    runKey: string,
    worker: string,
    message: string,
    attempt?: number,
  ): Promise<boolean> {
    return this.#end(experimentId, runKey, { worker, attempt }, "error", null, message);
  }

  /** One UPDATE that checks the holder: a worker that lost the run changes nothing. */
  #end(
    experimentId: string,
    runKey: string,
    holder: { worker: string; attempt: number | undefined },
    state: "done" | "error",
    outcome: RunOutcome | null,
    error: string | null,
  ): boolean {
    const attempt = holder.attempt ?? null;
    return (
      this.#db
        .prepare(
          `UPDATE queued_runs SET state = ?, outcome = ?, error = ?, lease_until = NULL, finished_at = ?
           WHERE experiment_id = ? AND run_key = ? AND state = 'claimed' AND worker = ?
             AND (? IS NULL OR attempts = ?)`,
        )
        .run(state, outcome, error, now(), experimentId, runKey, holder.worker, attempt, attempt)
        .changes === 1
    );
  }

  async sessionOf(experimentId: string, runKey: string): Promise<string | null> {
    const sessionId = this.#db
      .prepare("SELECT session_id FROM queued_runs WHERE experiment_id = ? AND run_key = ?")
      .pluck()
      .get(experimentId, runKey) as string | null | undefined;
    return sessionId ?? null;
  }

  async release(experimentId: string, worker: string): Promise<number> {
    return this.#db
      .prepare(
        `UPDATE queued_runs SET state = 'pending', worker = NULL, lease_until = NULL
         WHERE experiment_id = ? AND worker = ? AND state = 'claimed'`,
      )
      .run(experimentId, worker).changes;
  }

  async counts(experimentId: string): Promise<QueueCounts> {
    const read = this.#db.transaction(() => {
      const row = this.#db
        .prepare(
          `SELECT count(*) AS total,
             coalesce(sum(state = 'pending'), 0) AS pending,
             coalesce(sum(state = 'claimed'), 0) AS claimed,
             coalesce(sum(state = 'done'), 0) AS done,
             coalesce(sum(state = 'done' AND outcome = 'failed'), 0) AS failed,
             coalesce(sum(state = 'error'), 0) AS errors,
             coalesce(sum(attempts > 1), 0) AS reclaimed,
             min(CASE WHEN state = 'claimed' THEN lease_until END) AS next_lease
           FROM queued_runs WHERE experiment_id = ?`,
        )
        .get(experimentId) as Omit<QueueCounts, "last" | "next_expiry_ms"> & {
        next_lease: number | null;
      };
      const last = this.#db
        .prepare(
          `SELECT run_key, cell, scenario, repetition FROM queued_runs
           WHERE experiment_id = ? AND finished_at IS NOT NULL AND outcome IS NOT 'stored'
           ORDER BY finished_at DESC LIMIT 1`,
        )
        .get(experimentId) as QueueCounts["last"] | undefined;
      const { next_lease: nextLease, ...counts } = row;
      return {
        ...counts,
        last: last ?? null,
        next_expiry_ms: nextLease === null ? null : nextLease - now(),
      };
    });
    return read();
  }

  async errors(experimentId: string, limit: number): Promise<RunError[]> {
    return this.#db
      .prepare(
        `SELECT run_key, error AS message FROM queued_runs
         WHERE experiment_id = ? AND state = 'error' ORDER BY seq LIMIT ?`,
      )
      .all(experimentId, limit) as RunError[];
  }

  async close(): Promise<void> {
    this.#db.close();
  }
}
