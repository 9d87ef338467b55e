import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setImmediate as nextTurnOfEventLoop, setTimeout as sleep } from "node:timers/promises";
import { isDatabaseAway, untilDatabaseAnswers } from "../domain/database-away.js";
import type { Suite } from "../domain/experiment.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import type { ClaimedRun, RunError, RunOutcome, RunQueue } from "../store/run-queue.js";
import type { SessionStore } from "../store/session-store.js";
import { isRunComplete } from "./experiment-runs.js";
import { executeRun, type RunEnd, type RunExecution } from "./run-execution.js";
import type { PlannedRun } from "./run-plan.js";
import { expandCells } from "./suite.js";

export interface WorkerOptions {
  queue: RunQueue;
  store: SessionStore;
  providers: TurnProviders;
  experimentId: string;
  suite: Suite;
  suiteFile?: string | undefined;
  /** Runs at once in this worker. */
  concurrency: number;
  /** How long a claim holds without renewal; renewed every third of it while the run runs. */
  leaseMs: number;
  /** Stops claiming; running turns are cancelled and their runs given back. */
  signal?: AbortSignal | undefined;
  workerId?: string;
  /** Told when the database does not answer and the worker waits for it (see OUTAGE_LIMIT_MS). */
  onOutage?: ((error: unknown) => void) | undefined;
  /** How long the worker waits out a database that does not answer (default OUTAGE_LIMIT_MS). */
  outageLimitMs?: number | undefined;
}

export interface WorkerOutcome {
  worker: string;
  /** Runs this worker finished (done in the queue by it). */
  ran: number;
  /** Of those, runs with a failed turn. */
  failed: number;
  /** Runs that could not run at all. */
  errors: RunError[];
  /** Runs whose claim was lost (lease lapsed and taken) before they finished: not counted. */
  lost: number;
  /** Runs given back unfinished when the signal stopped the worker. */
  released: number;
}

/** At most this long between looks at the queue while other workers hold the last runs. */
const IDLE_POLL_MS = 500;

/** How long a worker rides out a database that does not answer (see `steady` in runWorker). */
export const OUTAGE_LIMIT_MS = 60_000;
const OUTAGE_RETRY_MS = 500;
/** How many times in all one attempt at a run is tried when the database goes away under it. */
const RUN_TRIES = 3;

/** Unique among every worker of every host: a pid is reused, and hosts share pids. */
export function newWorkerId(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

/**
 * A worker of a queued experiment: claims the next run, runs it, records it done (only while it
 * still holds the claim), until every run of the experiment is done or could not run. While runs
 * are claimed by others it waits: a worker that dies leaves its runs to lapse, and they are
 * claimed again here. On the signal it gives back what it holds.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerOutcome> {
  const { queue, experimentId, leaseMs, signal } = options;
  const worker = options.workerId ?? newWorkerId();
  const outcome: WorkerOutcome = { worker, ran: 0, failed: 0, errors: [], lost: 0, released: 0 };
  const cells = new Map(expandCells(options.suite).map((cell) => [cell.id, cell]));
  const scenarios = new Map(options.suite.scenarios.map((scenario) => [scenario.id, scenario]));
  const running = new Map<string, AbortController>();
  /** Each run key's latest attempt in this worker: only it may speak for the run to the queue. */
  const attempts = new Map<string, AbortController>();
  /**
   * A queue or store operation, tried again while the database is away (a restart, a network
   * cut), up to OUTAGE_LIMIT_MS: a team's shared database restarting for a second ended every
   * worker, and the experiment with them. Any other failure is thrown at once.
   */
  const steady = <T>(work: () => Promise<T>, stop: AbortSignal | undefined = signal): Promise<T> =>
    untilDatabaseAnswers(work, {
      limit_ms: options.outageLimitMs ?? OUTAGE_LIMIT_MS,
      every_ms: OUTAGE_RETRY_MS,
      onAway: options.onOutage,
      signal: stop,
    });
  const renewal = setInterval(
    () => {
      // Only the runs claimed before the renewal is sent are judged by its answer: a run claimed
      // while it is under way (its claim committed after the renewal's UPDATE read the table) is
      // missing from `held` although it is this worker's. Aborting it would cancel the run before
      // its first turn and leave its row claimed by this worker, renewed here forever: a hang.
      const judged = new Map(running);
      queue.renew(experimentId, worker, leaseMs).then(
        (held) => {
          for (const [runKey, controller] of judged) {
            if (!held.has(runKey)) controller.abort(new Error(`lost the claim on ${runKey}`));
          }
        },
        // A missed renewal is retried at the next tick; the lease outlasts two of them.
        () => {},
      );
    },
    Math.max(10, Math.floor(leaseMs / 3)),
  );

  const runClaimed = async (claimed: ClaimedRun): Promise<void> => {
    const cell = cells.get(claimed.cell);
    const scenario = scenarios.get(claimed.scenario);
    if (cell === undefined || scenario === undefined) {
      const message = `the experiment's stored suite has no ${cell === undefined ? `cell ${claimed.cell}` : `scenario ${claimed.scenario}`}`;
      if (await steady(() => queue.fail(experimentId, claimed.run_key, worker, message)))
        outcome.errors.push({ run_key: claimed.run_key, message });
      return;
    }
    // This worker held the run before and its lease lapsed (the database was away longer than
    // the lease), so it claimed the run again: its earlier attempt may still be going, on the
    // session this one deletes as stale. That attempt stops, and no longer speaks for the run
    // (its failure, "session not found", once ended the run this attempt was running); the
    // queue refuses what it still sends under its claim's attempt number (a late attach).
    const key = claimed.run_key;
    attempts.get(key)?.abort(new Error(`claimed ${key} again`));
    const controller = new AbortController();
    attempts.set(key, controller);
    const current = () => attempts.get(key) === controller;
    const run = { cell, scenario, repetition: claimed.repetition, run_key: key };
    try {
      await runAttempt(claimed, run, current, controller);
    } catch (error) {
      // A stopped attempt's wait for the database ends with the stop: the new one goes on.
      if (current()) throw error;
      outcome.lost += 1;
    } finally {
      if (current()) attempts.delete(key);
    }
  };

  /**
   * One attempt at a claimed run; `current` is false, and `controller` aborted, once this worker
   * claimed the run again.
   */
  const runAttempt = async (
    claimed: ClaimedRun,
    run: PlannedRun,
    current: () => boolean,
    controller: AbortController,
  ): Promise<void> => {
    const { scenario } = run;
    const { attempt } = claimed;
    const stop =
      signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
    const previous = claimed.previous_session;
    // A worker that stopped between its last turn and recording the run done left a whole run.
    if (
      previous !== null &&
      (await steady(async () => options.store.getSession(previous), stop)) !== null
    ) {
      const turns = await steady(async () => options.store.listTurns(previous), stop);
      if (isRunComplete(turns, scenario.turns.length)) {
        const failed = turns.some((turn) => turn.status === "failed");
        await finish(claimed.run_key, failed ? "failed" : "finished", null, current, attempt);
        return;
      }
      // An unfinished one goes before this attempt's attach: from then on the queue names this
      // attempt's session instead, and an attempt stopped before its run began (a SIGTERM just
      // after the claim) left the earlier session to no one, a second session of the run.
      try {
        await steady(async () => options.store.deleteSession(previous), stop);
      } catch (error) {
        // Deleted meanwhile (an earlier attempt of this worker, stopping) is the same end.
        if ((await steady(async () => options.store.getSession(previous))) !== null) {
          await failRun(claimed.run_key, error, attempt);
          return;
        }
      }
    }
    let sessionId = randomUUID();
    const attach = () =>
      steady(() => queue.attach(experimentId, claimed.run_key, worker, sessionId, attempt), stop);
    if (!(await attach())) {
      outcome.lost += 1;
      return;
    }
    running.set(claimed.run_key, controller);
    const context: RunExecution = {
      store: options.store,
      providers: options.providers,
      suite: options.suite,
      suiteFile: options.suiteFile,
      experimentId,
      signal: stop,
    };
    let end: RunEnd;
    try {
      let stale = previous === null ? [] : [previous];
      for (let tries = 1; ; tries++) {
        try {
          end = await executeRun(run, sessionId, stale, context);
          break;
        } catch (error) {
          // The database went away under the run (a restart, a cut connection): the run starts
          // over, whole, in a new session once the database answers again (`attach` waits for
          // it, up to the outage limit); the one cut short goes first. Before, the run was
          // reported as one that could not run, and only a resume ran it.
          if (!current() || stop.aborted || tries >= RUN_TRIES || !isDatabaseAway(error)) {
            throw error;
          }
          options.onOutage?.(error);
          // Every session a try left: one whose removal the outage cut short goes with the next.
          stale = [...stale, sessionId];
          sessionId = randomUUID();
          if (!(await attach())) {
            outcome.lost += 1;
            return;
          }
        }
      }
    } catch (error) {
      if (!current()) {
        outcome.lost += 1;
        return;
      }
      await failRun(claimed.run_key, error, attempt);
      return;
    } finally {
      if (running.get(claimed.run_key) === controller) running.delete(claimed.run_key);
    }
    if (!current()) {
      // Claimed again here: the new attempt deleted this one's session and runs the run.
      outcome.lost += 1;
      return;
    }
    if (end === "cancelled") {
      // Given back on the worker's signal (the next claimer deletes this session); a lost claim's
      // session is nobody's: the new holder already made its own.
      if (!controller.signal.aborted) return;
      // Cancelled as lost while the queue still has it claimed here: this worker would renew
      // that claim for ever and no one would run it. It ends as an error the report names (a
      // resume runs it again) instead; the fail changes nothing when the claim is another's.
      const message = `cancelled as a lost claim that this worker still held (${String(
        controller.signal.reason instanceof Error
          ? controller.signal.reason.message
          : controller.signal.reason,
      )})`;
      if (await steady(() => queue.fail(experimentId, claimed.run_key, worker, message, attempt))) {
        outcome.errors.push({ run_key: claimed.run_key, message });
        return;
      }
      await dropLost(claimed.run_key, sessionId);
      return;
    }
    await finish(claimed.run_key, end, sessionId, current, attempt);
  };

  /** The run could not run: an error the report names (a resume runs it again). */
  const failRun = async (runKey: string, error: unknown, attempt: number) => {
    const message = error instanceof Error ? error.message : String(error);
    if (await steady(() => queue.fail(experimentId, runKey, worker, message, attempt)))
      outcome.errors.push({ run_key: runKey, message });
  };

  const finish = async (
    runKey: string,
    end: RunOutcome,
    sessionId: string | null,
    current: () => boolean,
    attempt: number,
  ) => {
    if (
      current() &&
      (await steady(() => queue.finish(experimentId, runKey, worker, end, attempt)))
    ) {
      outcome.ran += 1;
      if (end === "failed") outcome.failed += 1;
    } else if (sessionId !== null) {
      await dropLost(runKey, sessionId);
    }
  };

  // The run went to the worker that took it over. This attempt's session is dropped unless the
  // run's row names it: then it is the run (the new holder found it complete and kept it) or the
  // new holder's to delete.
  const dropLost = async (runKey: string, sessionId: string) => {
    outcome.lost += 1;
    try {
      if ((await steady(() => queue.sessionOf(experimentId, runKey))) === sessionId) return;
      if ((await options.store.getSession(sessionId)) !== null)
        await options.store.deleteSession(sessionId);
    } catch {
      // Deleted meanwhile by the new holder: the same end.
    }
  };

  /** Lanes between asking for a claim and the end of the run it gave. */
  let claiming = 0;
  const lane = async () => {
    while (signal?.aborted !== true) {
      claiming += 1;
      let claimed: ClaimedRun | null;
      try {
        claimed = await steady(() => queue.claim(experimentId, worker, leaseMs));
        if (claimed !== null) await runClaimed(claimed);
      } finally {
        claiming -= 1;
      }
      if (claimed === null) {
        const counts = await steady(() => queue.counts(experimentId));
        if (counts.pending + counts.claimed === 0) return;
        await releaseStranded();
        const wait = Math.min(IDLE_POLL_MS, Math.max(20, counts.next_expiry_ms ?? IDLE_POLL_MS));
        await sleep(wait, undefined, signal === undefined ? {} : { signal }).catch(() => {});
        continue;
      }
      // A sim run never waits for I/O: let signals, timers (the lease renewal) and GC in.
      await nextTurnOfEventLoop();
    }
  };

  /**
   * A claim whose COMMIT went through while its answer was lost (the database went away just
   * then; `steady` asked again and got another run) is held here and renewed, yet no lane runs
   * it: the experiment would never end. With no lane of this worker claiming or running, every
   * claim the queue still gives this worker is such a one, and is given back.
   */
  const releaseStranded = async () => {
    if (claiming > 0 || running.size > 0) return;
    const held = await steady(() => queue.renew(experimentId, worker, leaseMs));
    if (held.size > 0 && claiming === 0 && running.size === 0) {
      await steady(() => queue.release(experimentId, worker));
    }
  };

  try {
    await Promise.all(Array.from({ length: options.concurrency }, lane));
  } finally {
    clearInterval(renewal);
    outcome.released = await queue.release(experimentId, worker);
  }
  return outcome;
}
