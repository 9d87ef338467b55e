import type {
  Cell,
  CellSummary,
  ExperimentReport,
  Price,
  RunResult,
} from "../domain/experiment.js";
import type { SessionStore } from "../store/session-store.js";
import { completeRunsByKey, findExperimentRuns, type StoredRun } from "./experiment-runs.js";
import { readRunFacts } from "./facts.js";
import { storedRunCost } from "./run-cost.js";
import { scoreRun } from "./score.js";
import { summarizeCell } from "./summarize.js";

export interface BuildReportOptions {
  store: SessionStore;
  experiment_id: string;
  suite: string;
  /** The suite's cells, in its order; cells found only in the store follow them. */
  cells: readonly Pick<Cell, "id" | "label" | "chat_model">[];
  /** The suite's scenario ids, in its order (runs are listed in it). */
  scenarios?: readonly string[];
  /** The suite's prices, over the built-in table. */
  prices: Record<string, Price>;
  now?: () => Date;
}

function chatModelOf(config: Record<string, unknown>): string {
  const agent = config.chat_agent;
  const model =
    agent !== null && typeof agent === "object" ? (agent as { model?: unknown }).model : undefined;
  return typeof model === "string" && model.length > 0 ? model : "sim";
}

async function scoreStoredRun(
  store: SessionStore,
  run: StoredRun,
  prices: Record<string, Price>,
): Promise<RunResult> {
  const turns = await readRunFacts(store, run.session.id);
  return {
    session_id: run.session.id,
    run_key: run.tag.run_key,
    cell: run.tag.cell,
    scenario: run.tag.scenario,
    category: run.tag.category,
    repetition: run.tag.repetition,
    turns,
    score: scoreRun(run.tag.expect, turns),
    ...(await storedRunCost(store, run.session, prices)),
  };
}

/**
 * Scores every finished run of the experiment found in the store (one per run key, earlier
 * invocations included) and summarizes them per cell. Incomplete runs are left out.
 */
export async function buildExperimentReport(
  options: BuildReportOptions,
): Promise<ExperimentReport> {
  const { store } = options;
  const stored = await findExperimentRuns(store, options.experiment_id);
  const complete = [...completeRunsByKey(stored).values()];

  const cells = new Map<string, { label: string; runs: RunResult[] }>();
  for (const cell of options.cells) cells.set(cell.id, { label: cell.label, runs: [] });
  for (const run of complete) {
    if (!cells.has(run.tag.cell)) cells.set(run.tag.cell, { label: run.tag.cell_label, runs: [] });
  }
  const scenarioOrder = new Map<string, number>();
  for (const id of options.scenarios ?? []) scenarioOrder.set(id, scenarioOrder.size);
  for (const run of stored) {
    if (!scenarioOrder.has(run.tag.scenario))
      scenarioOrder.set(run.tag.scenario, scenarioOrder.size);
  }
  const cellOrder = new Map([...cells.keys()].map((id, index) => [id, index]));
  complete.sort(
    (left, right) =>
      (cellOrder.get(left.tag.cell) ?? 0) - (cellOrder.get(right.tag.cell) ?? 0) ||
      (scenarioOrder.get(left.tag.scenario) ?? 0) - (scenarioOrder.get(right.tag.scenario) ?? 0) ||
      left.tag.repetition - right.tag.repetition,
  );

  const runs: RunResult[] = [];
  for (const run of complete) {
    const result = await scoreStoredRun(store, run, options.prices);
    runs.push(result);
    cells.get(result.cell)?.runs.push(result);
  }
  const summaries: CellSummary[] = [...cells].map(([id, cell]) =>
    summarizeCell({ id, label: cell.label }, cell.runs),
  );
  const simulated =
    options.cells.some((cell) => cell.chat_model.startsWith("sim")) ||
    complete.some((run) => chatModelOf(run.session.config).startsWith("sim"));
  return {
    experiment_id: options.experiment_id,
    suite: options.suite,
    generated_at: (options.now ?? (() => new Date()))().toISOString(),
    simulated,
    cells: summaries,
    runs,
  };
}
