import type { RunResult, ScenarioCategory } from "../domain/experiment.js";
import type {
  ScenarioCell,
  ScenarioComparison,
  ScenarioList,
  ScenarioRun,
} from "../domain/experiment-live.js";
import { ExperimentNotFoundError } from "../experiments/experiment-report-from-store.js";
import type { ExperimentView } from "../experiments/report-build.js";

/**
 * One scenario of an experiment, every cell's runs side by side (as promptfoo's matrix shows
 * them): each finished run's final answer, its tool calls with their arguments, and its verdict
 * with the failing checks. Bounded: a cell lists its first MAX_SCENARIO_RUNS repetitions and says
 * how many it has (`runs_total`); the cell drill-down pages the rest.
 */

export const MAX_SCENARIO_RUNS = 50;

export type {
  ScenarioCell,
  ScenarioComparison,
  ScenarioList,
  ScenarioRun,
} from "../domain/experiment-live.js";

/**
 * Every scenario with a run in the experiment, finished or not, by category then id: what the
 * scenario picker offers, from the report already built (the runs are all in it, however many).
 */
export function scenarioList(view: ExperimentView): ScenarioList {
  const byId = new Map<string, ScenarioCategory>();
  for (const run of [...view.report.runs, ...view.pending]) {
    if (!byId.has(run.scenario)) byId.set(run.scenario, run.category);
  }
  const scenarios = [...byId]
    .map(([scenario, category]) => ({ scenario, category }))
    .sort((a, b) => a.category.localeCompare(b.category) || a.scenario.localeCompare(b.scenario));
  return { experiment_id: view.report.experiment_id, scenarios };
}

function runOf(run: RunResult): ScenarioRun {
  return {
    session_id: run.session_id,
    repetition: run.repetition,
    success: run.score.success,
    failures: run.score.failures,
    answer: run.turns.at(-1)?.answer ?? "",
    tool_calls: run.turns.flatMap((turn, index) =>
      turn.tool_calls.map((call) => ({
        turn: index + 1,
        name: call.name,
        arguments: call.arguments,
        ok: call.ok,
      })),
    ),
  };
}

/** The scenario across the report's cells (in its order); ExperimentNotFoundError when unknown. */
export function scenarioView(view: ExperimentView, scenario: string): ScenarioComparison {
  const { report } = view;
  const finished = report.runs.filter((run) => run.scenario === scenario);
  const pending = view.pending.filter((run) => run.scenario === scenario);
  const category = finished[0]?.category ?? pending[0]?.category;
  if (category === undefined) {
    throw new ExperimentNotFoundError(
      `experiment ${report.experiment_id} has no run of scenario ${scenario}`,
    );
  }
  const cells = report.cells.map((summary): ScenarioCell => {
    const runs = finished
      .filter((run) => run.cell === summary.cell)
      .sort((left, right) => left.repetition - right.repetition);
    return {
      cell: summary.cell,
      label: summary.label,
      runs_total: runs.length,
      successes_total: runs.filter((run) => run.score.success).length,
      incomplete: pending.filter((run) => run.cell === summary.cell).length,
      runs: runs.slice(0, MAX_SCENARIO_RUNS).map(runOf),
    };
  });
  return { experiment_id: report.experiment_id, scenario, category, cells };
}
