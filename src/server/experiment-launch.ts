import { AgentLabError, InvalidInputError } from "../domain/errors.js";
import { type Cell, ExperimentTag, type Suite } from "../domain/experiment.js";
import { experimentSlices, storedRunsOf } from "../experiments/experiment-runs.js";
import { readRunFacts } from "../experiments/facts.js";
import type { ExperimentProgress } from "../experiments/progress.js";
import { runExperiment } from "../experiments/run-experiment.js";
import { scoreRun } from "../experiments/score.js";
import { expandCells, experimentIdOf } from "../experiments/suite.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import type { SessionStore } from "../store/session-store.js";
import type {
  ExperimentRunEnd,
  ExperimentRunOutcome,
  ExperimentRunProgress,
  RunningExperiment,
  RunningExperiments,
} from "./running-experiments.js";

/**
 * Starting an experiment in the server: the same runner and experiment id as `agent-lab bench`,
 * so either face resumes what the other left. A subset of the suite's cells runs as one
 * single-cell suite after another, each making exactly the cell (id, config, tag) the whole suite
 * makes, so its runs are the ones `bench` would store.
 */

export interface LaunchRequest {
  suite: Suite;
  file: string;
  /** Cell ids of the suite; default every cell. */
  cells?: readonly string[] | undefined;
  repetitions?: number | undefined;
  concurrency?: number | undefined;
}

export interface LaunchDependencies {
  store: SessionStore;
  providers: TurnProviders;
  experiments: RunningExperiments;
  reportError(where: string, error: unknown): void;
}

export interface Launched {
  experiment_id: string;
  total: number;
  skipped: number;
}

/** At most this many could-not-run errors travel in a `done` event (the count is always right). */
const MAX_REPORTED_ERRORS = 20;

/** The suite reduced to one cell of it, which it makes exactly as the whole suite does. */
export function singleCellSuite(suite: Suite, cell: Cell): Suite {
  const { matrix } = suite;
  const candidates = (matrix.configs ?? [undefined]).map(
    (config): Suite => ({
      ...suite,
      matrix: {
        ...matrix,
        modes: [cell.mode],
        chat_models: [cell.chat_model],
        // Absent means "follow the chat agent" (endpoint included): keep it absent.
        ...(matrix.event_models !== undefined ? { event_models: [cell.event_model] } : {}),
        ...(config !== undefined ? { configs: [config] } : {}),
      },
    }),
  );
  const wanted = JSON.stringify(cell);
  // The same cell but for its place, which in a suite of one is the first.
  const same = (made: Cell) => JSON.stringify({ ...made, order: cell.order }) === wanted;
  for (const candidate of candidates) {
    const made = expandCells(candidate);
    if (made.length === 1 && same(made[0] as Cell)) return candidate;
  }
  throw new InvalidInputError(`cells: cell ${cell.id} cannot be run on its own`);
}

/** The suites to run in turn: the suite itself, or one per chosen cell (in the suite's order). */
function segmentsOf(suite: Suite, chosen: readonly string[] | undefined): Suite[] {
  const cells = expandCells(suite);
  if (chosen === undefined) return [suite];
  const known = new Set(cells.map((cell) => cell.id));
  chosen.forEach((id, index) => {
    if (!known.has(id)) {
      throw new InvalidInputError(
        `request body: cells.${index}: suite ${suite.name} has no cell ${JSON.stringify(id)} (its cells: ${[...known].map((cell) => JSON.stringify(cell)).join(", ")})`,
      );
    }
  });
  const wanted = new Set(chosen);
  if (wanted.size === cells.length) return [suite];
  return cells.filter((cell) => wanted.has(cell.id)).map((cell) => singleCellSuite(suite, cell));
}

/** Planned runs and those already complete in the store, over the chosen cells. */
async function planOf(
  store: SessionStore,
  experimentId: string,
  segments: readonly Suite[],
  repetitions: number,
): Promise<{ total: number; skipped: number }> {
  const keys = new Set<string>();
  for (const segment of segments) {
    for (const cell of expandCells(segment)) {
      for (const scenario of segment.scenarios) {
        for (let repetition = 1; repetition <= repetitions; repetition++) {
          keys.add(`${cell.id}/${scenario.id}/${repetition}`);
        }
      }
    }
  }
  let skipped = 0;
  for await (const slice of experimentSlices(store, experimentId)) {
    for (const run of storedRunsOf(slice, experimentId)) {
      if (run.complete && keys.delete(run.tag.run_key)) skipped += 1;
    }
  }
  return { total: keys.size + skipped, skipped };
}

/**
 * The store, noting the session each run key gets (runExperiment makes one per run), so the run's
 * verdict can be scored when it finishes.
 */
function observedStore(
  store: SessionStore,
  onRun: (runKey: string, sessionId: string, tag: ExperimentTag) => void,
): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property !== "createSession") return value.bind(target);
      return async (options: Parameters<SessionStore["createSession"]>[0]) => {
        const id = await target.createSession(options);
        const tag = ExperimentTag.safeParse(options.config?.experiment);
        if (tag.success) onRun(tag.data.run_key, id, tag.data);
        return id;
      };
    },
  });
}

/**
 * Claims the experiment id (409 when it runs already), plans, and starts the runs in the
 * background; resolves once the runner has checked every cell it will run first (a cell that
 * cannot run is a 400 here, not an event), with the plan's counts.
 */
export async function launchExperiment(
  deps: LaunchDependencies,
  request: LaunchRequest,
): Promise<Launched> {
  const { suite } = request;
  const experimentId = experimentIdOf(suite);
  const segments = segmentsOf(suite, request.cells);
  const repetitions = request.repetitions ?? suite.repetitions;
  const concurrency = request.concurrency ?? suite.concurrency;
  let ready: (launched: Launched) => void = () => {};
  let refused: (error: unknown) => void = () => {};
  const started = new Promise<Launched>((resolve, reject) => {
    ready = resolve;
    refused = reject;
  });
  let announced = false;
  const initial = { total: 0, skipped: 0, finished: 0, failed: 0, running: 0, last: null };
  deps.experiments.start(
    experimentId,
    initial,
    async (experiment) => {
      try {
        return await runSegments(experiment, segments, {
          ...deps,
          request,
          cellOrder: new Map(expandCells(suite).map((cell) => [cell.id, cell.order ?? 0])),
          repetitions,
          concurrency,
          onStarted: (plan) => {
            announced = true;
            ready({ experiment_id: experimentId, ...plan });
          },
        });
      } catch (error) {
        if (!announced) refused(error);
        else if (!(error instanceof AgentLabError))
          deps.reportError(`experiment ${experimentId}`, error);
        return { type: "error", message: error instanceof Error ? error.message : String(error) };
      }
    },
    (error) => deps.reportError(`experiment ${experimentId}`, error),
  );
  return started;
}

interface SegmentOptions extends LaunchDependencies {
  request: LaunchRequest;
  cellOrder: ReadonlyMap<string, number>;
  repetitions: number;
  concurrency: number;
  onStarted(plan: { total: number; skipped: number }): void;
}

async function runSegments(
  experiment: RunningExperiment,
  segments: readonly Suite[],
  options: SegmentOptions,
): Promise<ExperimentRunEnd> {
  const { store, request } = options;
  const plan = await planOf(store, experiment.id, segments, options.repetitions);
  const progress: ExperimentRunProgress = {
    total: plan.total,
    skipped: plan.skipped,
    finished: plan.skipped,
    failed: 0,
    running: 0,
    last: null,
  };
  const runs = new Map<string, { sessionId: string; tag: ExperimentTag }>();
  const observed = observedStore(store, (runKey, sessionId, tag) =>
    runs.set(runKey, { sessionId, tag }),
  );
  // Verdicts are scored in the order runs finish, so the events keep that order.
  let verdicts: Promise<void> = Promise.resolve();
  const errors: ExperimentRunOutcome["errors"] = [];
  let errorCount = 0;
  let stopped = false;
  let first = true;
  for (const segment of segments) {
    if (experiment.signal.aborted) {
      stopped = true;
      break;
    }
    const base = { finished: progress.finished, failed: progress.failed };
    const onProgress = (state: ExperimentProgress) => {
      if (first) {
        first = false;
        options.onStarted(plan);
      }
      const snapshot: ExperimentRunProgress = {
        ...progress,
        finished: base.finished + state.done - state.skipped,
        failed: base.failed + state.failed_runs,
        running: Math.min(options.concurrency, state.total - state.done),
      };
      Object.assign(progress, snapshot);
      const runKey = state.current?.run_key;
      if (runKey === undefined) {
        experiment.update(snapshot);
        return;
      }
      verdicts = verdicts.then(async () => {
        const run = runs.get(runKey);
        runs.delete(runKey);
        const success = run === undefined ? false : await verdictOf(store, run);
        experiment.update({ ...snapshot, last: { run_key: runKey, success } });
      });
    };
    const outcome = await runExperiment({
      store: observed,
      suite: segment,
      // A chosen cell's runs carry its place in the whole suite, as the whole suite's do.
      cellOrder: options.cellOrder,
      suiteFile: request.file,
      experimentId: experiment.id,
      signal: experiment.signal,
      providers: options.providers,
      concurrency: options.concurrency,
      repetitions: options.repetitions,
      keep_runs: false,
      onProgress,
    });
    await verdicts;
    errorCount += outcome.errors.length;
    for (const error of outcome.errors) {
      if (errors.length < MAX_REPORTED_ERRORS) errors.push(error);
    }
    if (outcome.stopped) stopped = true;
  }
  if (first) options.onStarted(plan);
  const final = { ...progress, running: 0, ...lastOf(experiment) };
  if (stopped) return { type: "cancelled", progress: final };
  return {
    type: "done",
    outcome: {
      experiment_id: experiment.id,
      total: plan.total,
      skipped: plan.skipped,
      finished: progress.finished - errorCount,
      errors,
    },
  };
}

function lastOf(experiment: RunningExperiment): Pick<ExperimentRunProgress, "last"> {
  return { last: experiment.progress.last };
}

/** The finished run's verdict, scored from what its session stored (as the report scores it). */
async function verdictOf(
  store: SessionStore,
  run: { sessionId: string; tag: ExperimentTag },
): Promise<boolean> {
  try {
    return scoreRun(run.tag.expect, await readRunFacts(store, run.sessionId), run.tag).success;
  } catch {
    return false;
  }
}
