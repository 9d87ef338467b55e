import { randomUUID } from "node:crypto";
import { setImmediate as nextTurnOfEventLoop } from "node:timers/promises";
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
import { experimentSlices, storedRunsOf } from "./experiment-runs.js";
import type { ExperimentProgress, RunLabel } from "./progress.js";
import { buildExperimentReport } from "./report-build.js";
import { runConfigOf, scoringRulesOf } from "./run-config.js";
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
  /**
   * Default true: the report lists every run. False: its `runs` is empty and each run is folded
   * into its cell's summary as it is read, so memory stays flat however many runs there are.
   */
  keep_runs?: boolean;
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
  /** Every finished run of the experiment, earlier ones included, scored (see `keep_runs`). */
  report: ExperimentReport;
}

const Counts = z.strictObject({
  concurrency: z.number().int().min(1).max(64),
  repetitions: z.number().int().min(1).max(1000),
});

/** One run of the plan: what it is, not yet its config (made when it starts). */
interface PlannedRun {
  cell: Cell;
  scenario: Scenario;
  repetition: number;
  run_key: string;
}

/** What a run needs besides itself: the options and the experiment's id. */
interface RunContext extends RunExperimentOptions {
  experimentId: string;
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
  const planned = () => plannedRuns(suite, cells, counts.repetitions);
  await checkCells(suite, cells, experimentId, options);

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
  const context: RunContext = { ...options, experimentId };
  await runPool(pending(), counts.concurrency, signal, async (run) => {
    let end: RunEnd;
    try {
      end = await executeRun(run, stale.get(run.run_key) ?? [], context);
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

  const report = await buildExperimentReport({
    store,
    experiment_id: experimentId,
    suite: suite.name,
    cells,
    scenarios: suite.scenarios.map((scenario) => scenario.id),
    prices: suite.prices,
    keep_runs: options.keep_runs ?? true,
  });
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

/**
 * The runs in the order they start: repetition by repetition, each scenario across every cell, so
 * a stopped experiment has comparable partial results for all cells. Made one at a time, so a plan
 * of 50,000 runs holds no more than the one in hand.
 */
function* plannedRuns(
  suite: Suite,
  cells: readonly Cell[],
  repetitions: number,
): Generator<PlannedRun> {
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    for (const scenario of suite.scenarios) {
      for (const cell of cells) {
        yield { cell, scenario, repetition, run_key: `${cell.id}/${scenario.id}/${repetition}` };
      }
    }
  }
}

function labelOf(run: PlannedRun): RunLabel {
  return {
    run_key: run.run_key,
    cell: run.cell.id,
    cell_label: run.cell.label,
    scenario: run.scenario.id,
    repetition: run.repetition,
  };
}

/** The run's session config: the cell's, validated, with its experiment tag. */
function runConfig(run: PlannedRun, context: RunContext): LabSessionConfig {
  const { suite } = context;
  const config = runConfigOf(run.cell.config, suite, run.scenario, run.repetition);
  const tag: ExperimentTag = {
    id: context.experimentId,
    suite: suite.name,
    cell: run.cell.id,
    cell_label: run.cell.label,
    scenario: run.scenario.id,
    category: run.scenario.category,
    repetition: run.repetition,
    run_key: run.run_key,
    expect: run.scenario.turns.map((turn) => turn.expect),
    ...scoringRulesOf(run.scenario, config),
    ...(Object.keys(suite.prices).length > 0 ? { prices: suite.prices } : {}),
    ...(context.suiteFile !== undefined ? { suite_file: context.suiteFile } : {}),
  };
  return parseInput(
    LabSessionConfig,
    { ...config, experiment: tag },
    `suite ${suite.name}: cell ${run.cell.label}: config`,
  );
}

/**
 * Refuses, before anything is stored, a cell whose models or tools cannot be built: every one of
 * its runs would fail the same way.
 */
async function checkCells(
  suite: Suite,
  cells: readonly Cell[],
  experimentId: string,
  options: RunExperimentOptions,
): Promise<void> {
  // Scenarios may declare tools of their own, so each pair is checked once.
  for (const run of plannedRuns(suite, cells, 1)) {
    try {
      await prepareTurn(runConfig(run, { ...options, experimentId }), options.providers);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new InvalidInputError(`suite ${suite.name}: cell ${run.cell.label}: ${message}`, {
        cause: error,
      });
    }
  }
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

/**
 * One run: a fresh session (after removing the run key's incomplete ones, so results never mix),
 * its scenario's turns in order on one pair of models. A failed turn does not stop the run (the
 * next turn still runs on a valid history); a cancelled one does, leaving the run incomplete.
 */
async function executeRun(
  run: PlannedRun,
  stale: readonly string[],
  options: RunContext,
): Promise<RunEnd> {
  const { store, signal } = options;
  if (signal?.aborted) return "cancelled";
  for (const oldId of stale) {
    if ((await store.getSession(oldId)) !== null) await store.deleteSession(oldId);
  }
  const config = runConfig(run, options);
  const models = {
    chat: options.providers.models.chatModel(config.chat_agent),
    event: options.providers.models.chatModel(config.event_agent),
  };
  const sessionId = await store.createSession({
    session_id: randomUUID(),
    title: `${options.suite.name} · ${run.cell.label} · ${run.scenario.id} #${run.repetition}`,
    config,
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
