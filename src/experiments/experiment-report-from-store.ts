import { z } from "zod";
import { AgentLabError } from "../domain/errors.js";
import {
  type CellRun,
  type ExperimentListItem,
  type ExperimentReportWithProgress,
  Price,
} from "../domain/experiment.js";
import type { SessionStore } from "../store/session-store.js";
import {
  completeRunsByKey,
  experimentTagOf,
  findExperimentRuns,
  type StoredRun,
} from "./experiment-runs.js";
import { readRunFacts } from "./facts.js";
import { buildExperimentReport } from "./report-build.js";
import { storedRunCost } from "./run-cost.js";
import { scoreRun } from "./score.js";

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

const PriceTable = z.record(z.string(), Price);

/** The suite's prices, as the runner copies them into each tag. */
function pricesOf(runs: readonly StoredRun[]): Record<string, Price> {
  const prices: Record<string, Price> = {};
  for (const run of runs) {
    const parsed = PriceTable.safeParse(run.tag.prices);
    if (parsed.success) Object.assign(prices, parsed.data);
  }
  return prices;
}

function chatModelOf(config: Record<string, unknown>): string {
  const agent = config.chat_agent;
  const model =
    agent !== null && typeof agent === "object" ? (agent as { model?: unknown }).model : undefined;
  return typeof model === "string" && model.length > 0 ? model : "sim";
}

/** Distinct values in the order they first appear. */
function firstSeen<T, K>(items: readonly T[], key: (item: T) => K): T[] {
  const seen = new Map<K, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

/** The run keys of `runs` that have no complete session. */
function pendingRuns(runs: readonly StoredRun[]): StoredRun[] {
  const complete = completeRunsByKey(runs);
  return firstSeen(
    runs.filter((run) => !complete.has(run.tag.run_key)),
    (run) => run.tag.run_key,
  );
}

async function requireRuns(store: SessionStore, experimentId: string): Promise<StoredRun[]> {
  const runs = await findExperimentRuns(store, experimentId);
  if (runs.length === 0) throw new ExperimentNotFoundError(`experiment not found: ${experimentId}`);
  return runs;
}

/**
 * The experiment's report: each finished run (one per run key) scored from what its session
 * stored and summarized per cell, cells in the order their first session was created; plus how
 * many runs have not finished. Throws ExperimentNotFoundError when no session carries the id.
 */
export async function experimentReportFromStore(
  store: SessionStore,
  experimentId: string,
  now: () => Date = () => new Date(),
): Promise<ExperimentReportWithProgress> {
  const runs = await requireRuns(store, experimentId);
  const cells = firstSeen(runs, (run) => run.tag.cell).map((run) => ({
    id: run.tag.cell,
    label: run.tag.cell_label || run.tag.cell,
    chat_model: chatModelOf(run.session.config),
  }));
  const report = await buildExperimentReport({
    store,
    experiment_id: experimentId,
    suite: runs[0]?.tag.suite ?? experimentId,
    cells,
    prices: pricesOf(runs),
    now,
  });
  return { ...report, incomplete: pendingRuns(runs).length };
}

/**
 * The runs of one cell: the finished session of each run key, scored, then the run keys not
 * finished yet (their latest session, unscored). Throws when the experiment or cell is unknown.
 */
export async function cellRunsFromStore(
  store: SessionStore,
  experimentId: string,
  cell: string,
): Promise<CellRun[]> {
  const all = await requireRuns(store, experimentId);
  const runs = all.filter((run) => run.tag.cell === cell);
  if (runs.length === 0) {
    throw new ExperimentNotFoundError(`experiment ${experimentId} has no cell ${cell}`);
  }
  const scenarioOrder = new Map(
    firstSeen(all, (run) => run.tag.scenario).map((run, index) => [run.tag.scenario, index]),
  );
  const byScenario = (left: StoredRun, right: StoredRun) =>
    (scenarioOrder.get(left.tag.scenario) ?? 0) - (scenarioOrder.get(right.tag.scenario) ?? 0) ||
    left.tag.repetition - right.tag.repetition;
  const prices = pricesOf(all);

  const listed: CellRun[] = [];
  for (const run of [...completeRunsByKey(runs).values()].sort(byScenario)) {
    const turns = await readRunFacts(store, run.session.id);
    listed.push({
      ...runFields(run),
      incomplete: false,
      score: scoreRun(run.tag.expect, turns),
      ...(await storedRunCost(store, run.session, prices)),
    });
  }
  // The latest attempt of each unfinished run key: the one a person would open.
  const latest = pendingRuns([...runs].reverse()).sort(byScenario);
  for (const run of latest)
    listed.push({
      ...runFields(run),
      incomplete: true,
      score: null,
      cost_usd: null,
      cost_source: "unknown",
    });
  return listed;
}

function runFields(run: StoredRun) {
  return {
    session_id: run.session.id,
    run_key: run.tag.run_key,
    scenario: run.tag.scenario,
    category: run.tag.category,
    repetition: run.tag.repetition,
  };
}

/**
 * Every experiment in the store, the most recently run first: its suite, how many sessions carry
 * it and when the first and last were created. There is no store query across experiments, so
 * this reads each session's config: fine for a lab's few thousand sessions; past that, a store
 * method selecting the distinct tags in SQL is the way.
 */
export async function listExperiments(store: SessionStore): Promise<ExperimentListItem[]> {
  const experiments = new Map<string, ExperimentListItem>();
  for (const item of await store.listSessions()) {
    const session = await store.getSession(item.id);
    const tag = session === null ? null : experimentTagOf(session);
    if (session === null || tag === null) continue;
    const known = experiments.get(tag.id);
    if (known === undefined) {
      experiments.set(tag.id, {
        id: tag.id,
        suite: tag.suite,
        sessions: 1,
        first_created_at: session.created_at,
        last_created_at: session.created_at,
      });
      continue;
    }
    known.sessions += 1;
    if (session.created_at < known.first_created_at) known.first_created_at = session.created_at;
    if (session.created_at > known.last_created_at) known.last_created_at = session.created_at;
  }
  return [...experiments.values()].sort(
    (left, right) =>
      right.last_created_at.localeCompare(left.last_created_at) || left.id.localeCompare(right.id),
  );
}
