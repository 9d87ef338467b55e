import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { closedLoopbackPort } from "../../test/closed-port.js";
import { createLabProviders } from "../composition/lab-providers.js";
import { type ExperimentReport, type RunResult, Suite } from "../domain/experiment.js";
import { experimentReportFromStore } from "./experiment-report-from-store.js";
import { completeRunsByKey, findExperimentRuns } from "./experiment-runs.js";
import { readRunFacts } from "./facts.js";
import { buildExperimentReport } from "./report-build.js";
import { storedRunCost } from "./run-cost.js";
import { runExperiment } from "./run-experiment.js";
import { scoreRun } from "./score.js";
import { expandCells } from "./suite.js";
import { summarizeCell } from "./summarize.js";
import { temporaryStorePerTest } from "./test-fixtures.js";

/**
 * The report read in bulk is the report read session by session: the same runs, scores, costs and
 * cell summaries, on an experiment with several cells, scenarios, repetitions, a failing scenario,
 * a priced model and a resumed (duplicate-free) run.
 */

const lab = temporaryStorePerTest();

const suite = Suite.parse({
  name: "bulk",
  matrix: {
    modes: ["chat_agent_tools", "dual_agent"],
    configs: [
      { name: "clean", config: {} },
      {
        name: "sloppy",
        config: { chat_agent: { model: "sim", options: { malformed_arguments_rate: 0.5 } } },
      },
    ],
  },
  repetitions: 3,
  concurrency: 3,
  prices: { sim: { input: 0.7, output: 2.3 } },
  scenarios: [
    {
      id: "search",
      category: "simple",
      turns: [
        {
          user: "search for agent lab",
          expect: { tools: [{ name: "mock_search", arguments: { query: { contains: "agent" } } }] },
        },
      ],
    },
    {
      id: "two-turns",
      category: "multi_turn",
      turns: [
        {
          user: "file a ticket about the login page",
          expect: { tools: [{ name: "mock_ticket" }] },
        },
        { user: "hello there", expect: { no_tools: true } },
      ],
    },
    {
      id: "wrong",
      category: "irrelevance",
      turns: [{ user: "search for sqlite", expect: { no_tools: true } }],
    },
  ],
});

/** The report as it was built before bulk reads: each finished run read session by session. */
async function reportSessionBySession(
  experimentId: string,
): Promise<Pick<ExperimentReport, "cells" | "runs">> {
  const stored = await findExperimentRuns(lab.store, experimentId);
  const byCell = new Map<string, RunResult[]>();
  for (const cell of expandCells(suite)) byCell.set(cell.id, []);
  const scenarios = suite.scenarios.map((scenario) => scenario.id);
  const complete = [...completeRunsByKey(stored).values()].sort(
    (left, right) =>
      [...byCell.keys()].indexOf(left.tag.cell) - [...byCell.keys()].indexOf(right.tag.cell) ||
      scenarios.indexOf(left.tag.scenario) - scenarios.indexOf(right.tag.scenario) ||
      left.tag.repetition - right.tag.repetition,
  );
  for (const run of complete) {
    const turns = await readRunFacts(lab.store, run.session.id);
    byCell.get(run.tag.cell)?.push({
      session_id: run.session.id,
      run_key: run.tag.run_key,
      cell: run.tag.cell,
      scenario: run.tag.scenario,
      category: run.tag.category,
      repetition: run.tag.repetition,
      turns,
      score: scoreRun(run.tag.expect, turns),
      ...(await storedRunCost(lab.store, run.session, suite.prices)),
    });
  }
  const labels = new Map(expandCells(suite).map((cell) => [cell.id, cell.label]));
  return {
    cells: [...byCell].map(([id, runs]) =>
      summarizeCell({ id, label: labels.get(id) ?? id }, runs),
    ),
    runs: [...byCell.values()].flat(),
  };
}

it("builds the same report from bulk slices as from per-session reads, runs kept or folded", async () => {
  const controller = new AbortController();
  let finished = 0;
  // Stopped part-way, then resumed: the report must count each run key once.
  await runExperiment({
    store: lab.store,
    suite,
    providers: createLabProviders(),
    signal: controller.signal,
    onProgress: (progress) => {
      finished = progress.done;
      if (finished >= 10) controller.abort();
    },
  });
  const outcome = await runExperiment({ store: lab.store, suite, providers: createLabProviders() });
  expect(outcome.finished).toBe(36);
  const { report } = outcome;
  expect(report.runs).toHaveLength(36);

  const reference = await reportSessionBySession(outcome.experiment_id);
  expect(report.runs).toStrictEqual(reference.runs);
  expect(report.cells).toStrictEqual(reference.cells);
  expect(report.cells.some((cell) => (cell.cost_usd ?? 0) > 0)).toBe(true);
  expect(report.cells.some((cell) => cell.fallback_rate > 0 || cell.tool_error_rate > 0)).toBe(
    true,
  );

  // Folded as read, without keeping the runs: the same cells (costs summed in stored order).
  const folded = await buildExperimentReport({
    store: lab.store,
    experiment_id: outcome.experiment_id,
    suite: suite.name,
    cells: expandCells(suite),
    scenarios: suite.scenarios.map((scenario) => scenario.id),
    prices: suite.prices,
    keep_runs: false,
  });
  expect(folded.runs).toStrictEqual([]);
  expect(folded.cells.map(({ cost_usd: _, ...cell }) => cell)).toStrictEqual(
    report.cells.map(({ cost_usd: _, ...cell }) => cell),
  );
  folded.cells.forEach((cell, index) => {
    expect(cell.cost_usd).toBeCloseTo(report.cells[index]?.cost_usd ?? Number.NaN, 12);
  });

  // The faces' report (cells, prices and order from the tags alone) lists the same runs.
  const fromStore = await experimentReportFromStore(lab.store, outcome.experiment_id);
  expect(fromStore.runs).toStrictEqual(report.runs);
  expect(fromStore.cells).toStrictEqual(report.cells);
  expect(fromStore.incomplete).toBe(0);
});

it("lists the cells in the suite's order however their sessions' times fall (workers make them in the same millisecond)", async () => {
  const outcome = await runExperiment({ store: lab.store, suite, providers: createLabProviders() });
  const order = expandCells(suite).map((cell) => cell.id);
  expect(order).toHaveLength(4);
  // The last cell's sessions made first, and the rest at one and the same instant.
  const raw = new Database(lab.store.path);
  raw.exec(`UPDATE sessions SET created_at = '2026-01-01T00:00:00.500Z'`);
  raw
    .prepare(
      "UPDATE sessions SET created_at = '2026-01-01T00:00:00.000Z' WHERE json_extract(config_json, '$.experiment.cell') = ?",
    )
    .run(order.at(-1));
  raw.close();
  const fromStore = await experimentReportFromStore(lab.store, outcome.experiment_id);
  expect(fromStore.cells.map((cell) => cell.cell)).toEqual(order);
  expect(outcome.report.cells.map((cell) => cell.cell)).toEqual(order);
  // Resumed across the upgrade: the first cell's first runs were recorded without the order.
  const older = new Database(lab.store.path);
  older
    .prepare(
      `UPDATE sessions SET config_json = json_remove(config_json, '$.experiment.cell_order')
       WHERE id IN (SELECT id FROM sessions
         WHERE json_extract(config_json, '$.experiment.cell') = ? AND
           json_extract(config_json, '$.experiment.repetition') = 1)`,
    )
    .run(order[0]);
  older.close();
  const resumed = await experimentReportFromStore(lab.store, outcome.experiment_id);
  expect(resumed.cells.map((cell) => cell.cell)).toEqual(order);
});

it("prices calls recorded without any price from each session's config and the tags' prices", async () => {
  const outcome = await runExperiment({ store: lab.store, suite, providers: createLabProviders() });
  // As an upgraded or imported store may hold them: model calls without a figure.
  const raw = new Database(lab.store.path);
  raw.exec("UPDATE usage_stats SET cost_usd = NULL, cost_estimated_usd = NULL");
  raw.close();
  const reference = await reportSessionBySession(outcome.experiment_id);
  expect(reference.runs.every((run) => run.cost_source === "estimated")).toBe(true);
  expect(reference.runs.some((run) => (run.cost_usd ?? 0) > 0)).toBe(true);
  const fromStore = await experimentReportFromStore(lab.store, outcome.experiment_id);
  expect(fromStore.runs).toStrictEqual(reference.runs);
  expect(fromStore.cells).toStrictEqual(reference.cells);
});

it("prices them by the latest session's tag when the tags' prices disagree", async () => {
  const outcome = await runExperiment({ store: lab.store, suite, providers: createLabProviders() });
  const raw = new Database(lab.store.path);
  raw.exec("UPDATE usage_stats SET cost_usd = NULL, cost_estimated_usd = NULL");
  // One run in the middle carries other prices; the latest run still carries the suite's.
  const ids = raw
    .prepare("SELECT id FROM sessions WHERE experiment_id = ? ORDER BY created_at, rowid")
    .pluck()
    .all(outcome.experiment_id) as string[];
  raw
    .prepare(
      `UPDATE sessions SET config_json =
         json_set(config_json, '$.experiment.prices.sim', json('{"input": 100, "output": 100}'))
       WHERE id = ?`,
    )
    .run(ids[Math.floor(ids.length / 2)]);
  raw.close();
  const reference = await reportSessionBySession(outcome.experiment_id);
  const fromStore = await experimentReportFromStore(lab.store, outcome.experiment_id);
  expect(fromStore.runs).toStrictEqual(reference.runs);
  expect(fromStore.cells).toStrictEqual(reference.cells);
});

it("says why a run's turn failed, the same from the bulk read as from the session's own", async () => {
  const port = await closedLoopbackPort();
  const down = Suite.parse({
    name: "down",
    matrix: {
      modes: ["chat_agent_tools"],
      configs: [
        {
          name: "unreachable",
          config: {
            chat_agent: {
              model: "openai:nothing",
              base_url: `http://127.0.0.1:${port}/v1`,
              options: { max_retries: 0 },
            },
          },
        },
      ],
    },
    repetitions: 1,
    scenarios: [
      {
        id: "search",
        category: "simple",
        turns: [{ user: "search for agent lab", expect: { tools: [{ name: "mock_search" }] } }],
      },
    ],
  });
  const outcome = await runExperiment({
    store: lab.store,
    suite: down,
    providers: createLabProviders(),
  });
  const [run] = outcome.report.runs;
  expect(run?.turns[0]?.status).toBe("failed");
  expect(run?.score.failures[0]).toMatch(
    /^turn 1: ended failed \(provider_connection_error: .*127\.0\.0\.1/,
  );
  expect(await readRunFacts(lab.store, run?.session_id as string)).toStrictEqual(run?.turns);
  const fromStore = await experimentReportFromStore(lab.store, outcome.experiment_id);
  expect(fromStore.runs).toStrictEqual(outcome.report.runs);
});
