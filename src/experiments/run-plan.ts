import { InvalidInputError } from "../domain/errors.js";
import type { Cell, ExperimentTag, Scenario, Suite } from "../domain/experiment.js";
import { LabSessionConfig } from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";
import { prepareTurn, type TurnProviders } from "../runtime/turn-providers.js";
import type { RunLabel } from "./progress.js";
import { runConfigOf, scoringRulesOf } from "./run-config.js";

/** One run of the plan: what it is, not yet its config (made when it starts). */
export interface PlannedRun {
  cell: Cell;
  scenario: Scenario;
  repetition: number;
  run_key: string;
}

/** What a run's config is made from besides the run: the suite and the experiment. */
export interface PlanContext {
  suite: Suite;
  experimentId: string;
  /** Where the suite came from; recorded in each run's tag. */
  suiteFile?: string | undefined;
}

export const runKeyOf = (cellId: string, scenarioId: string, repetition: number): string =>
  `${cellId}/${scenarioId}/${repetition}`;

/**
 * The runs in the order they start: repetition by repetition, each scenario across every cell, so
 * a stopped experiment has comparable partial results for all cells. Made one at a time, so a plan
 * of 50,000 runs holds no more than the one in hand.
 */
export function* plannedRuns(
  suite: Suite,
  cells: readonly Cell[],
  repetitions: number,
): Generator<PlannedRun> {
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    for (const scenario of suite.scenarios) {
      for (const cell of cells) {
        yield { cell, scenario, repetition, run_key: runKeyOf(cell.id, scenario.id, repetition) };
      }
    }
  }
}

export function labelOf(run: PlannedRun): RunLabel {
  return {
    run_key: run.run_key,
    cell: run.cell.id,
    cell_label: run.cell.label,
    scenario: run.scenario.id,
    repetition: run.repetition,
  };
}

/** The run's session config: the cell's, validated, with its experiment tag. */
export function runConfig(run: PlannedRun, context: PlanContext): LabSessionConfig {
  const { suite } = context;
  const config = runConfigOf(run.cell.config, suite, run.scenario, run.repetition);
  const tag: ExperimentTag = {
    id: context.experimentId,
    suite: suite.name,
    cell: run.cell.id,
    cell_label: run.cell.label,
    ...(run.cell.order !== undefined ? { cell_order: run.cell.order } : {}),
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
export async function checkCells(
  context: PlanContext,
  cells: readonly Cell[],
  providers: TurnProviders,
): Promise<void> {
  const { suite } = context;
  // Scenarios may declare tools of their own, so each pair is checked once.
  for (const run of plannedRuns(suite, cells, 1)) {
    try {
      await prepareTurn(runConfig(run, context), providers);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new InvalidInputError(`suite ${suite.name}: cell ${run.cell.label}: ${message}`, {
        cause: error,
      });
    }
  }
}
