import { AgentLabError, InvalidInputError } from "../domain/errors.js";
import type { CellRun, ExperimentReportWithProgress } from "../domain/experiment.js";
import { decodeCursor, encodeCursor, type Page, PageRequest } from "../domain/pagination.js";
import { parseInput } from "../domain/validation.js";
import type { SessionStore } from "../store/session-store.js";
import { buildExperimentView, type ExperimentView } from "./report-build.js";

/**
 * The faces' view of experiments (HTTP API, web UI), read back from the store alone: every run is
 * a session whose config carries an `experiment` tag, so neither the suite file nor the runner is
 * needed. The report is the one the runner prints (`buildExperimentReport`), with the suite's
 * cells, scenario order and prices taken from the tags.
 */

/** No session carries this experiment id (or, for a drill-down, this cell). */
export class ExperimentNotFoundError extends AgentLabError {
  // The HTTP face answers `not_found` with 404.
  readonly code = "not_found" as const;
}

/**
 * The experiment's report and what its drill-downs list: each finished run (one per run key)
 * scored from what its session stored and summarized per cell, cells in the order their first
 * session was created. Throws ExperimentNotFoundError when no session carries the id.
 */
export async function experimentViewFromStore(
  store: SessionStore,
  experimentId: string,
  now: () => Date = () => new Date(),
): Promise<ExperimentView> {
  const view = await buildExperimentView({ store, experiment_id: experimentId, now });
  if (view.stored_runs === 0) {
    throw new ExperimentNotFoundError(`experiment not found: ${experimentId}`);
  }
  return view;
}

/** The report, plus how many runs have not finished (see ExperimentReportWithProgress). */
export function reportWithProgress(view: ExperimentView): ExperimentReportWithProgress {
  return { ...view.report, incomplete: view.pending.length };
}

export async function experimentReportFromStore(
  store: SessionStore,
  experimentId: string,
  now: () => Date = () => new Date(),
): Promise<ExperimentReportWithProgress> {
  return reportWithProgress(await experimentViewFromStore(store, experimentId, now));
}

/**
 * The runs of one cell: the finished session of each run key, scored (scenario order, then
 * repetition), then the run keys not finished yet (their latest session, unscored). Throws when
 * the cell is unknown.
 */
export function cellRunsOf(view: ExperimentView, cell: string): CellRun[] {
  const listed: CellRun[] = view.report.runs
    .filter((run) => run.cell === cell)
    .map((run) => ({
      session_id: run.session_id,
      run_key: run.run_key,
      scenario: run.scenario,
      category: run.category,
      repetition: run.repetition,
      incomplete: false,
      score: run.score,
      cost_usd: run.cost_usd,
      cost_source: run.cost_source,
    }));
  const scenarioOrder = new Map<string, number>();
  for (const run of view.report.runs) {
    if (!scenarioOrder.has(run.scenario)) scenarioOrder.set(run.scenario, scenarioOrder.size);
  }
  const pending = view.pending
    .filter((run) => run.cell === cell)
    .sort(
      (left, right) =>
        (scenarioOrder.get(left.scenario) ?? scenarioOrder.size) -
          (scenarioOrder.get(right.scenario) ?? scenarioOrder.size) ||
        left.repetition - right.repetition,
    );
  for (const { cell: _, ...run } of pending) {
    listed.push({ ...run, incomplete: true, score: null, cost_usd: null, cost_source: "unknown" });
  }
  if (listed.length === 0 && !view.report.cells.some((summary) => summary.cell === cell)) {
    throw new ExperimentNotFoundError(
      `experiment ${view.report.experiment_id} has no cell ${cell}`,
    );
  }
  return listed;
}

/** How a cell's runs are listed: as cellRunsOf gives them, or `failedFirst`. */
export type CellRunOrder = "run" | "failed_first";

/** The runs that failed, then the incomplete ones, then those that passed, each as they came. */
export function failedFirst(runs: readonly CellRun[]): CellRun[] {
  const rank = (run: CellRun) =>
    run.incomplete || run.score === null ? 1 : run.score.success ? 2 : 0;
  return runs
    .map((run, index) => ({ run, index, rank: rank(run) }))
    .sort((left, right) => left.rank - right.rank || left.index - right.index)
    .map(({ run }) => run);
}

/**
 * A page of a cell's runs (see cellRunsOf). The cursor names the list (`experiment`, `cell`), the
 * last run handed out and its place: a cursor of another cell is refused as such, and when that
 * run has left the list since (its session deleted), the next page starts where it stood.
 */
export function cellRunPage(
  runs: readonly CellRun[],
  page: PageRequest,
  list: { experiment: string; cell: string; order?: CellRunOrder },
): Page<CellRun> {
  const { limit, cursor } = parseInput(PageRequest, page, "cell runs");
  const order = list.order ?? "run";
  let start = 0;
  if (cursor !== undefined) {
    const [kind, experiment, cell, ordered, sessionId, place] = decodeCursor(cursor, [
      "string",
      "string",
      "string",
      "string",
      "string",
      "number",
    ]);
    if (
      kind !== "cell-runs" ||
      experiment !== list.experiment ||
      cell !== list.cell ||
      ordered !== order
    ) {
      throw new InvalidInputError(
        `cursor: not a cursor of cell ${list.cell}'s runs in experiment ${list.experiment} in ${order} order (pass the next_cursor of the previous page unchanged)`,
      );
    }
    const at = runs.findIndex((run) => run.session_id === sessionId);
    // Gone: the runs after it moved up by one, so the next one now stands where it stood.
    start = at >= 0 ? at + 1 : Math.min(Math.max(0, Math.floor(Number(place))), runs.length);
  }
  const items = runs.slice(start, start + limit);
  const last = items.at(-1);
  const place = start + items.length - 1;
  return {
    items,
    next_cursor:
      start + limit < runs.length && last !== undefined
        ? encodeCursor(["cell-runs", list.experiment, list.cell, order, last.session_id, place])
        : null,
  };
}
