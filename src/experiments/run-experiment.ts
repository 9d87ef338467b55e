import { randomUUID } from "node:crypto";
import { z } from "zod";
import { policyApprover } from "../domain/approvals.js";
import { InvalidInputError } from "../domain/errors.js";
import type {
  Cell,
  ExperimentReport,
  ExperimentTag,
  Scenario,
  Suite,
} from "../domain/experiment.js";
import { LabSessionConfig } from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";
import { runTurn } from "../runtime/run-turn.js";
import { prepareTurn, type TurnProviders } from "../runtime/turn-providers.js";
import type { SessionStore } from "../store/session-store.js";
import { findExperimentRuns, type StoredRun } from "./experiment-runs.js";
import type { ExperimentProgress, RunLabel } from "./progress.js";
import { buildExperimentReport } from "./report-build.js";
import { runConfigOf } from "./run-config.js";
import { expandCells, experimentIdOf } from "./suite.js";

export interface RunExperimentOptions {
  store: SessionStore;
  suite: Suite;
  /** Where the suite came from; recorded in each run's tag. */
  suiteFile?: string;
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
}

export interface RunError {
  run_key: string;
  message: string;
}

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
  /** Every finished run of the experiment, earlier ones included, scored. */
  report: ExperimentReport;
}

const Counts = z.strictObject({
  concurrency: z.number().int().min(1).max(64),
  repetitions: z.number().int().min(1).max(1000),
});

interface PlannedRun {
  cell: Cell;
  scenario: Scenario;
  repetition: number;
  run_key: string;
  label: RunLabel;
  /** The session config: the cell's, validated, with its experiment tag. */
  config: LabSessionConfig;
  title: string;
  /** Incomplete sessions of this run key, deleted before it runs again. */
  stale: StoredRun[];
}

type RunEnd = "finished" | "failed" | "cancelled";

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
  const cells = expandCells(suite);
  const plan = planRuns(options, experimentId, cells, counts.repetitions);
  await checkCells(plan, options);

  const stored = await findExperimentRuns(store, experimentId);
  const completeKeys = new Set(stored.filter((run) => run.complete).map((run) => run.tag.run_key));
  const pending: PlannedRun[] = [];
  for (const run of plan) {
    if (completeKeys.has(run.run_key)) continue;
    run.stale = stored.filter((old) => old.tag.run_key === run.run_key);
    pending.push(run);
  }

  const progress: ExperimentProgress = {
    done: plan.length - pending.length,
    total: plan.length,
    skipped: plan.length - pending.length,
    failed_runs: 0,
    current: null,
  };
  options.onProgress?.({ ...progress });
  const errors: RunError[] = [];
  await runPool(pending, counts.concurrency, signal, async (run) => {
    let end: RunEnd;
    try {
      end = await executeRun(run, options);
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
    progress.current = run.label;
    options.onProgress?.({ ...progress, current: { ...run.label } });
  });

  const report = await buildExperimentReport({
    store,
    experiment_id: experimentId,
    suite: suite.name,
    cells,
    scenarios: suite.scenarios.map((scenario) => scenario.id),
    prices: suite.prices,
  });
  return {
    experiment_id: experimentId,
    total: plan.length,
    skipped: progress.skipped,
    finished: progress.done - errors.length,
    stopped: signal?.aborted === true && progress.done < plan.length,
    errors,
    report,
  };
}

/**
 * The runs in the order they start: repetition by repetition, each scenario across every cell, so
 * a stopped experiment has comparable partial results for all cells.
 */
function planRuns(
  options: RunExperimentOptions,
  experimentId: string,
  cells: readonly Cell[],
  repetitions: number,
): PlannedRun[] {
  const { suite } = options;
  const plan: PlannedRun[] = [];
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    for (const scenario of suite.scenarios) {
      for (const cell of cells) {
        const run_key = `${cell.id}/${scenario.id}/${repetition}`;
        const tag: ExperimentTag = {
          id: experimentId,
          suite: suite.name,
          cell: cell.id,
          cell_label: cell.label,
          scenario: scenario.id,
          category: scenario.category,
          repetition,
          run_key,
          expect: scenario.turns.map((turn) => turn.expect),
          ...(Object.keys(suite.prices).length > 0 ? { prices: suite.prices } : {}),
          ...(options.suiteFile !== undefined ? { suite_file: options.suiteFile } : {}),
        };
        plan.push({
          cell,
          scenario,
          repetition,
          run_key,
          label: {
            run_key,
            cell: cell.id,
            cell_label: cell.label,
            scenario: scenario.id,
            repetition,
          },
          config: parseInput(
            LabSessionConfig,
            { ...runConfigOf(cell.config, suite, scenario, repetition), experiment: tag },
            `suite ${suite.name}: cell ${cell.label}: config`,
          ),
          title: `${suite.name} · ${cell.label} · ${scenario.id} #${repetition}`,
          stale: [],
        });
      }
    }
  }
  return plan;
}

/**
 * Refuses, before anything is stored, a cell whose models or tools cannot be built: every one of
 * its runs would fail the same way.
 */
async function checkCells(
  plan: readonly PlannedRun[],
  options: RunExperimentOptions,
): Promise<void> {
  const checked = new Set<string>();
  for (const run of plan) {
    // Scenarios may declare tools of their own, so each pair is checked once.
    const key = `${run.cell.id}/${run.scenario.id}`;
    if (checked.has(key)) continue;
    checked.add(key);
    try {
      await prepareTurn(run.config, options.providers);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new InvalidInputError(
        `suite ${options.suite.name}: cell ${run.cell.label}: ${message}`,
        {
          cause: error,
        },
      );
    }
  }
}

/** At most `limit` workers; none starts once the signal is aborted. */
async function runPool<Item>(
  items: readonly Item[],
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: Item) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (signal?.aborted !== true) {
      const item = items[next++];
      if (item === undefined) return;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * One run: a fresh session (after removing the run key's incomplete ones, so results never mix),
 * its scenario's turns in order on one pair of models. A failed turn does not stop the run (the
 * next turn still runs on a valid history); a cancelled one does, leaving the run incomplete.
 */
async function executeRun(run: PlannedRun, options: RunExperimentOptions): Promise<RunEnd> {
  const { store, signal } = options;
  if (signal?.aborted) return "cancelled";
  for (const old of run.stale) {
    if ((await store.getSession(old.session.id)) !== null)
      await store.deleteSession(old.session.id);
  }
  const models = {
    chat: options.providers.models.chatModel(run.config.chat_agent),
    event: options.providers.models.chatModel(run.config.event_agent),
  };
  const sessionId = await store.createSession({
    session_id: randomUUID(),
    title: run.title,
    config: run.config,
  });
  let failed = false;
  for (const turn of run.scenario.turns) {
    if (signal?.aborted) return "cancelled";
    let status: string | null = null;
    for await (const event of runTurn({
      store,
      message: turn.user,
      session_id: sessionId,
      models,
      approve: policyApprover(options.suite.approval),
      providers: options.providers,
      ...(signal !== undefined ? { signal } : {}),
    })) {
      if (event.type === "turn_end") status = event.status;
    }
    if (status === null || status === "cancelled") return "cancelled";
    if (status === "failed") failed = true;
  }
  return failed ? "failed" : "finished";
}
