import { setImmediate as nextTurnOfEventLoop } from "node:timers/promises";
import type {
  Cell,
  CellRun,
  CellSummary,
  ExperimentReport,
  Price,
  RunResult,
} from "../domain/experiment.js";
import { callCost } from "../domain/usage.js";
import type { ExperimentScoringRows, ScoringCall } from "../store/experiment-records.js";
import type { SessionStore } from "../store/session-store.js";
import { EXPERIMENT_SLICE, isRunComplete } from "./experiment-runs.js";
import { runFactsOf } from "./facts.js";
import { callsCost } from "./run-cost.js";
import { scoreRun } from "./score.js";
import { type StoredTag, TagReader } from "./stored-tags.js";
import { CellFold } from "./summarize.js";

export interface BuildReportOptions {
  store: SessionStore;
  experiment_id: string;
  /** Default: the suite named by the oldest run's tag (else the experiment id). */
  suite?: string;
  /**
   * The suite's cells, in its order; cells found only in the store follow them. Default: every
   * cell of the stored runs (finished or not), in the order their first session was created.
   */
  cells?: readonly Pick<Cell, "id" | "label" | "chat_model">[];
  /** The suite's scenario ids, in its order (runs are listed in it). */
  scenarios?: readonly string[];
  /** The suite's prices, over the built-in table. Default: the prices the runs' tags carry. */
  prices?: Record<string, Price>;
  /**
   * Default true. False: each finished run is folded into its cell's summary as it is read and
   * dropped, and the report's `runs` is empty, so memory does not grow with the runs (the
   * cells' costs are then summed in the order the runs were stored).
   */
  keep_runs?: boolean;
  now?: () => Date;
}

/** A run key with no finished session: its latest attempt, as a drill-down lists it. */
export type PendingRun = Omit<CellRun, "score" | "cost_usd" | "cost_source" | "incomplete"> & {
  cell: string;
};

/** The report, plus what the faces show beside it. */
export interface ExperimentView {
  report: ExperimentReport;
  /** Sessions tagged with the experiment (a valid tag); 0 means no such experiment. */
  stored_runs: number;
  /** Run keys without a finished session, each by its latest attempt, oldest key first. */
  pending: PendingRun[];
}

function runFieldsOf(sessionId: string, stored: StoredTag): PendingRun {
  return {
    session_id: sessionId,
    run_key: stored.run_key,
    cell: stored.tag.cell,
    scenario: stored.tag.scenario,
    category: stored.tag.category,
    repetition: stored.repetition,
  };
}

/** A scored run whose cost waits for the suite's prices (some call had no recorded price). */
interface Unpriced {
  result: RunResult;
  calls: readonly ScoringCall[];
  config: Record<string, unknown>;
}

/** A model call without a recorded price: the price table decides its cost. */
function needsTable(call: ScoringCall): boolean {
  return call.call_kind !== "tool_execution" && callCost(call).usd === null;
}

/**
 * Scores every finished run of the experiment found in the store (one per run key: the oldest
 * finished session, earlier invocations included) and summarizes them per cell. Incomplete runs
 * are left out. The store is read a slice of sessions at a time (`experimentSlices`), a few bulk
 * queries each, so the queries do not grow with the runs' rows and memory holds one slice.
 */
export async function buildExperimentView(options: BuildReportOptions): Promise<ExperimentView> {
  const { store, experiment_id } = options;
  const storedCells = new Map<string, Pick<Cell, "id" | "label" | "chat_model" | "order">>();
  // A finished run's cell missing from the given cells is labelled as its tag spells it.
  const tagLabels = new Map<string, string>();
  const scenarioOrder = new Map<string, number>();
  for (const id of options.scenarios ?? []) scenarioOrder.set(id, scenarioOrder.size);
  // Each distinct price table the tags carry (one object per distinct tag, see TagReader), by the
  // last session that carried it: assigned in that order at the end, the same table results as
  // from assigning every session's in turn.
  const tagPriceTables = new Set<Record<string, Price>>();
  const keepRuns = options.keep_runs ?? true;
  const finishedKeys = new Set<string>();
  const kept: RunResult[] = [];
  const unpriced: Unpriced[] = [];
  // Suite cells first; cells found only among the finished runs follow, in the order they appear.
  const cells = new Map<string, CellFold>();
  for (const cell of options.cells ?? []) cells.set(cell.id, new CellFold(cell));
  const cellOf = (id: string) => {
    let fold = cells.get(id);
    if (fold === undefined) {
      // The suite's cells were given; else every cell comes from the stored runs.
      const label = options.cells === undefined ? storedCells.get(id)?.label : tagLabels.get(id);
      fold = new CellFold({ id, label: label ?? "" });
      cells.set(id, fold);
    }
    return fold;
  };
  const pending = new Map<string, PendingRun>();
  let suite: string | undefined;
  let simulatedRun = false;
  let storedRuns = 0;

  const tags = new TagReader();
  // A call recorded without any price is priced from its session's config: the slice's few runs
  // with one have it read whole (scoring rows hold only the config's tag and chat model).
  const configs = new Map<string, Record<string, unknown>>();
  const visit = (sessionId: string, stored: StoredTag, slice: ExperimentScoringRows) => {
    const { tag, run_key: runKey } = stored;
    storedRuns += 1;
    suite ??= tag.suite;
    const known = storedCells.get(tag.cell);
    if (known === undefined) {
      storedCells.set(tag.cell, {
        id: tag.cell,
        label: tag.cell_label || tag.cell,
        chat_model: stored.chat_model,
        ...(tag.cell_order !== undefined ? { order: tag.cell_order } : {}),
      });
    } else if (known.order === undefined && tag.cell_order !== undefined) {
      // The cell's first runs were recorded before runs carried it (an experiment resumed).
      known.order = tag.cell_order;
    }
    if (!scenarioOrder.has(tag.scenario)) scenarioOrder.set(tag.scenario, scenarioOrder.size);
    if (options.prices === undefined) {
      tagPriceTables.delete(stored.prices);
      tagPriceTables.add(stored.prices);
    }
    if (finishedKeys.has(runKey)) return;
    if (!tagLabels.has(tag.cell)) tagLabels.set(tag.cell, tag.cell_label);
    const runTurns = slice.turns.get(sessionId) ?? [];
    if (!isRunComplete(runTurns, tag.expect.length)) {
      pending.set(runKey, runFieldsOf(sessionId, stored));
      return;
    }
    pending.delete(runKey);
    if (stored.chat_model.startsWith("sim")) simulatedRun = true;
    const calls = slice.calls.get(sessionId) ?? [];
    const turns = runFactsOf({
      turns: runTurns,
      messages: slice.messages.get(sessionId) ?? [],
      calls,
      audit: [
        ...(slice.tool_ends.get(sessionId) ?? []),
        ...(slice.turn_failures.get(sessionId) ?? []),
      ],
    });
    // Only a call recorded without any price needs the table (and the config read for it).
    const config = configs.get(sessionId);
    const cost = callsCost(calls, config ?? {}, options.prices ?? {});
    // Spelled out in RunResult's key order (the report's JSON), not spread from a PendingRun.
    const result: RunResult = {
      session_id: sessionId,
      run_key: runKey,
      cell: tag.cell,
      scenario: tag.scenario,
      category: tag.category,
      repetition: stored.repetition,
      turns,
      score: scoreRun(tag.expect, turns, tag),
      cost_usd: cost.cost_usd,
      cost_source: cost.cost_source,
    };
    finishedKeys.add(runKey);
    if (keepRuns) kept.push(result);
    // Such a run is priced at the end, once every tag's prices are known (rare: upgrades and
    // imports fill estimates in).
    if (options.prices === undefined && config !== undefined) {
      unpriced.push({ result, calls, config });
    } else if (!keepRuns) {
      cellOf(result.cell).add(result);
    }
  };
  let cursor: string | null = null;
  do {
    const slice: ExperimentScoringRows = await store.experimentScoringRows(experiment_id, {
      limit: EXPERIMENT_SLICE,
      ...(cursor !== null ? { cursor } : {}),
    });
    configs.clear();
    for (const { id } of slice.sessions) {
      if (slice.calls.get(id)?.some(needsTable)) {
        configs.set(id, (await store.getSession(id))?.config ?? {});
      }
    }
    for (const session of slice.sessions) {
      const stored = tags.read(session);
      if (stored !== null && stored.tag.id === experiment_id) visit(session.id, stored, slice);
    }
    cursor = slice.next_cursor;
    // A server builds reports beside its gateway, API and running turns: on SQLite the slices
    // are read synchronously, and a 50,000-run report held the event loop for seconds at once.
    if (cursor !== null) await nextTurnOfEventLoop();
  } while (cursor !== null);
  const tagPrices: Record<string, Price> = {};
  for (const prices of tagPriceTables) Object.assign(tagPrices, prices);
  for (const { result, calls, config } of unpriced) {
    Object.assign(result, callsCost(calls, config, tagPrices));
    if (!keepRuns) cellOf(result.cell).add(result);
  }
  if (options.cells === undefined) {
    // Every stored cell, finished runs or not, in the suite's order as the tags give it (the
    // order the runner reports them in), then, for runs recorded without it, in the order its
    // first session was created: with workers, sessions of several cells are made in the same
    // millisecond, and each backend broke the tie its own way.
    const folded = new Map(cells);
    cells.clear();
    const unordered = Number.MAX_SAFE_INTEGER;
    const stored = [...storedCells.values()].sort(
      (left, right) => (left.order ?? unordered) - (right.order ?? unordered),
    );
    for (const cell of stored) cells.set(cell.id, folded.get(cell.id) ?? new CellFold(cell));
  }
  // Cells of finished runs the given cells lack, in the order the runs were stored.
  for (const run of kept) cellOf(run.cell);
  const cellOrder = new Map([...cells.keys()].map((id, index) => [id, index]));
  // Each run's place by cell and scenario, computed once, not at each comparison; ties keep
  // their order (as a stable sort of the runs).
  const place = kept.map(
    (run) =>
      (cellOrder.get(run.cell) ?? 0) * (scenarioOrder.size + 1) +
      (scenarioOrder.get(run.scenario) ?? 0),
  );
  const order = kept.map((_, index) => index);
  order.sort(
    (left, right) =>
      (place[left] as number) - (place[right] as number) ||
      (kept[left] as RunResult).repetition - (kept[right] as RunResult).repetition ||
      left - right,
  );
  const sorted = order.map((index) => kept[index] as RunResult);
  for (const run of sorted) cellOf(run.cell).add(run);
  const summaries: CellSummary[] = [...cells.values()].map((fold) => fold.summary());
  const simulated =
    [...(options.cells ?? storedCells.values())].some((cell) =>
      cell.chat_model.startsWith("sim"),
    ) || simulatedRun;
  const report: ExperimentReport = {
    experiment_id,
    suite: options.suite ?? suite ?? experiment_id,
    generated_at: (options.now ?? (() => new Date()))().toISOString(),
    simulated,
    cells: summaries,
    runs: sorted,
  };
  return { report, stored_runs: storedRuns, pending: [...pending.values()] };
}

/** The report alone (see buildExperimentView). */
export async function buildExperimentReport(
  options: BuildReportOptions,
): Promise<ExperimentReport> {
  return (await buildExperimentView(options)).report;
}
