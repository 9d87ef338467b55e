import type pg from "pg";
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
import { inTransaction } from "./transaction.js";

/**
 * The run queue in PostgreSQL, on the store's pool. A claim locks the row it takes with
 * `FOR UPDATE SKIP LOCKED`: workers on many hosts never wait for each other nor take one run
 * twice. Leases are the server's clock (`clock_timestamp()`), the one clock every host shares.
 * The tables are created when missing, under an advisory lock so N workers starting together do
 * not race on the catalog.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS queued_experiments (
  experiment_id TEXT PRIMARY KEY,
  plan JSONB NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
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
  lease_until TIMESTAMPTZ,
  attempts INTEGER NOT NULL DEFAULT 0,
  session_id TEXT,
  outcome TEXT,
  error TEXT,
  finished_at TIMESTAMPTZ,
  PRIMARY KEY (experiment_id, run_key)
);
CREATE INDEX IF NOT EXISTS queued_runs_by_state ON queued_runs (experiment_id, state, seq);
CREATE INDEX IF NOT EXISTS queued_runs_by_finish ON queued_runs (experiment_id, finished_at);
`;

/** Any number; the run queue's schema step holds it (a transaction-scoped advisory lock). */
const SCHEMA_LOCK = 0x72756e71; // "runq"

const CLAIM_COLUMNS = "q.run_key, q.cell, q.scenario, q.repetition, q.attempts, q.session_id";

interface RunEnding {
  state: "done" | "error";
  outcome: RunOutcome | null;
  error: string | null;
}

interface ClaimRow {
  run_key: string;
  cell: string;
  scenario: string;
  repetition: number;
  attempts: number;
  session_id: string | null;
}

export class PostgresRunQueue implements RunQueue {
  readonly #pool: pg.Pool;

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  static async open(pool: pg.Pool): Promise<PostgresRunQueue> {
    await inTransaction(pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      await client.query(SCHEMA);
    });
    return new PostgresRunQueue(pool);
  }

  async saveExperiment(experiment: QueuedExperiment): Promise<void> {
    await this.#pool.query(
      `INSERT INTO queued_experiments (experiment_id, plan) VALUES ($1, $2)
       ON CONFLICT (experiment_id) DO UPDATE SET plan = excluded.plan, updated_at = clock_timestamp()`,
      [
        experiment.experiment_id,
        JSON.stringify({ suite: experiment.suite, suite_file: experiment.suite_file }),
      ],
    );
  }

  async readExperiment(experimentId: string): Promise<QueuedExperiment | null> {
    const { rows } = await this.#pool.query<{
      plan: { suite: unknown; suite_file?: string | null };
    }>("SELECT plan FROM queued_experiments WHERE experiment_id = $1", [experimentId]);
    const plan = rows[0]?.plan;
    if (plan === undefined) return null;
    return { experiment_id: experimentId, suite: plan.suite, suite_file: plan.suite_file ?? null };
  }

  async addRuns(experimentId: string, runs: Iterable<PlannedRunRow>): Promise<number> {
    let added = 0;
    for (const batch of chunksOf(runs, RUN_INSERT_BATCH)) {
      const result = await this.#pool.query(
        `INSERT INTO queued_runs (experiment_id, run_key, seq, cell, scenario, repetition)
         SELECT $1, * FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::int[])
         ON CONFLICT DO NOTHING`,
        [
          experimentId,
          batch.map((run) => run.run_key),
          batch.map((run) => run.seq),
          batch.map((run) => run.cell),
          batch.map((run) => run.scenario),
          batch.map((run) => run.repetition),
        ],
      );
      added += result.rowCount ?? 0;
    }
    return added;
  }

  async doneRuns(experimentId: string): Promise<Map<string, string | null>> {
    const { rows } = await this.#pool.query<{ run_key: string; session_id: string | null }>(
      "SELECT run_key, session_id FROM queued_runs WHERE experiment_id = $1 AND state = 'done'",
      [experimentId],
    );
    return new Map(rows.map((row) => [row.run_key, row.session_id]));
  }

  async reconcile(experimentId: string, changes: Reconciliation): Promise<void> {
    const keys = (runs: { run_key: string }[]) => runs.map((run) => run.run_key);
    const sessions = (runs: { session_id: string | null }[]) => runs.map((run) => run.session_id);
    await inTransaction(this.#pool, async (client) => {
      await client.query(
        `UPDATE queued_runs q SET state = 'done', outcome = 'stored', session_id = c.session_id,
           worker = NULL, lease_until = NULL, error = NULL, finished_at = clock_timestamp()
         FROM unnest($2::text[], $3::text[]) AS c(run_key, session_id)
         WHERE q.experiment_id = $1 AND q.run_key = c.run_key AND q.state IN ('pending', 'error')`,
        [experimentId, keys(changes.stored), sessions(changes.stored)],
      );
      await client.query(
        `UPDATE queued_runs q SET state = 'pending', outcome = NULL, session_id = NULL, finished_at = NULL
         FROM unnest($2::text[], $3::text[]) AS c(run_key, session_id)
         WHERE q.experiment_id = $1 AND q.run_key = c.run_key AND q.state = 'done'
           AND q.session_id IS NOT DISTINCT FROM c.session_id`,
        [experimentId, keys(changes.reopened), sessions(changes.reopened)],
      );
      await client.query(
        `UPDATE queued_runs q SET session_id = c.session_id
         FROM unnest($2::text[], $3::text[]) AS c(run_key, session_id)
         WHERE q.experiment_id = $1 AND q.run_key = c.run_key AND q.state = 'pending'
           AND q.session_id IS NULL`,
        [experimentId, keys(changes.stale), sessions(changes.stale)],
      );
      if (changes.retry_errors) {
        await client.query(
          `UPDATE queued_runs SET state = 'pending', error = NULL, worker = NULL
           WHERE experiment_id = $1 AND state = 'error'`,
          [experimentId],
        );
      }
    });
  }

  async claim(experimentId: string, worker: string, leaseMs: number): Promise<ClaimedRun | null> {
    // A lapsed lease first (its worker is dead or stuck), then the plan's order. Two statements:
    // FOR UPDATE cannot sit under a UNION.
    for (const candidates of [
      `state = 'claimed' AND lease_until < clock_timestamp() ORDER BY lease_until`,
      `state = 'pending' ORDER BY seq`,
    ]) {
      const { rows } = await this.#pool.query<ClaimRow>(
        `WITH next AS (
           SELECT run_key FROM queued_runs WHERE experiment_id = $1 AND ${candidates}
           LIMIT 1 FOR UPDATE SKIP LOCKED)
         UPDATE queued_runs q SET state = 'claimed', worker = $2, attempts = q.attempts + 1,
           lease_until = clock_timestamp() + $3 * interval '1 millisecond'
         FROM next WHERE q.experiment_id = $1 AND q.run_key = next.run_key
         RETURNING ${CLAIM_COLUMNS}`,
        [experimentId, worker, leaseMs],
      );
      const row = rows[0];
      if (row !== undefined) {
        // RETURNING gives the new attempts; the previous attempt's session is unchanged.
        return {
          run_key: row.run_key,
          cell: row.cell,
          scenario: row.scenario,
          repetition: row.repetition,
          attempt: row.attempts,
          previous_session: row.session_id,
        };
      }
    }
    return null;
  }

  async attach(
    experimentId: string,
    runKey: string,
    worker: string,
    sessionId: string,
    attempt?: number,
  ): Promise<boolean> {
    const result = await this.#pool.query(
      `UPDATE queued_runs SET session_id = $4
       WHERE experiment_id = $1 AND run_key = $2 AND state = 'claimed' AND worker = $3
         AND ($5::int IS NULL OR attempts = $5)`,
      [experimentId, runKey, worker, sessionId, attempt ?? null],
    );
    return result.rowCount === 1;
  }

  async renew(experimentId: string, worker: string, leaseMs: number): Promise<Set<string>> {
    const { rows } = await this.#pool.query<{ run_key: string }>(
      `UPDATE queued_runs SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
       WHERE experiment_id = $1 AND worker = $2 AND state = 'claimed' RETURNING run_key`,
      [experimentId, worker, leaseMs],
    );
    return new Set(rows.map((row) => row.run_key));
  }

  async finish(
    experimentId: string,
    runKey: string,
    worker: string,
    outcome: RunOutcome,
    attempt?: number,
  ): Promise<boolean> {
    return this.#end(experimentId, runKey, worker, attempt, {
      state: "done",
      outcome,
      error: null,
    });
  }

  async fail(
    experimentId: string,
    runKey: string,
    worker: string,
    message: string,
    attempt?: number,
  ): Promise<boolean> {
    return this.#end(experimentId, runKey, worker, attempt, {
      state: "error",
      outcome: null,
      error: message,
    });
  }

  /** One UPDATE that checks the holder: a worker that lost the run changes nothing. */
  async #end(
    experimentId: string,
    runKey: string,
    worker: string,
    attempt: number | undefined,
    end: RunEnding,
  ): Promise<boolean> {
    const result = await this.#pool.query(
      `UPDATE queued_runs SET state = $4, outcome = $5, error = $6, lease_until = NULL,
         finished_at = clock_timestamp()
       WHERE experiment_id = $1 AND run_key = $2 AND state = 'claimed' AND worker = $3
         AND ($7::int IS NULL OR attempts = $7)`,
      [experimentId, runKey, worker, end.state, end.outcome, end.error, attempt ?? null],
    );
    return result.rowCount === 1;
  }

  async sessionOf(experimentId: string, runKey: string): Promise<string | null> {
    const { rows } = await this.#pool.query<{ session_id: string | null }>(
      "SELECT session_id FROM queued_runs WHERE experiment_id = $1 AND run_key = $2",
      [experimentId, runKey],
    );
    return rows[0]?.session_id ?? null;
  }

  async release(experimentId: string, worker: string): Promise<number> {
    const result = await this.#pool.query(
      `UPDATE queued_runs SET state = 'pending', worker = NULL, lease_until = NULL
       WHERE experiment_id = $1 AND worker = $2 AND state = 'claimed'`,
      [experimentId, worker],
    );
    return result.rowCount ?? 0;
  }

  async counts(experimentId: string): Promise<QueueCounts> {
    const { rows } = await this.#pool.query<Record<string, string | null>>(
      `SELECT count(*) AS total,
         count(*) FILTER (WHERE state = 'pending') AS pending,
         count(*) FILTER (WHERE state = 'claimed') AS claimed,
         count(*) FILTER (WHERE state = 'done') AS done,
         count(*) FILTER (WHERE state = 'done' AND outcome = 'failed') AS failed,
         count(*) FILTER (WHERE state = 'error') AS errors,
         count(*) FILTER (WHERE attempts > 1) AS reclaimed,
         extract(epoch FROM min(lease_until) FILTER (WHERE state = 'claimed') - clock_timestamp())
           * 1000 AS next_expiry_ms
       FROM queued_runs WHERE experiment_id = $1`,
      [experimentId],
    );
    const last = await this.#pool.query<NonNullable<QueueCounts["last"]>>(
      `SELECT run_key, cell, scenario, repetition FROM queued_runs
       WHERE experiment_id = $1 AND finished_at IS NOT NULL AND outcome IS DISTINCT FROM 'stored'
       ORDER BY finished_at DESC LIMIT 1`,
      [experimentId],
    );
    const row = rows[0] ?? {};
    const count = (name: string) => Number(row[name] ?? 0);
    const expiry = row.next_expiry_ms;
    return {
      total: count("total"),
      pending: count("pending"),
      claimed: count("claimed"),
      done: count("done"),
      failed: count("failed"),
      errors: count("errors"),
      reclaimed: count("reclaimed"),
      last: last.rows[0] ?? null,
      next_expiry_ms: expiry === null || expiry === undefined ? null : Number(expiry),
    };
  }

  async errors(experimentId: string, limit: number): Promise<RunError[]> {
    const { rows } = await this.#pool.query<RunError>(
      `SELECT run_key, error AS message FROM queued_runs
       WHERE experiment_id = $1 AND state = 'error' ORDER BY seq LIMIT $2`,
      [experimentId, limit],
    );
    return rows;
  }

  /** The pool is the store's: closing the store ends it. */
  async close(): Promise<void> {}
}
