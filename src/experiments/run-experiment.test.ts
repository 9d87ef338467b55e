import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { createLabProviders } from "../composition/lab-providers.js";
import { type ExperimentReport, ExperimentTag, Suite } from "../domain/experiment.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import type { ToolContext } from "../tools/tool.js";
import { findExperimentRuns, isRunComplete } from "./experiment-runs.js";
import type { ExperimentProgress } from "./progress.js";
import { renderHtmlReport } from "./report-html.js";
import { runExperiment } from "./run-experiment.js";
import { experimentIdOf } from "./suite.js";

const HOSTILE = "search for <script>alert(1)</script>";

/** 2 modes × 2 scenarios × 2 repetitions on the simulated model; the second scenario fails. */
function smallSuite(chatOptions: Record<string, unknown> = {}): Suite {
  return Suite.parse({
    name: "small",
    config: { chat_agent: { options: chatOptions } },
    matrix: { modes: ["chat_agent_tools", "dual_agent"], chat_models: ["sim"] },
    repetitions: 2,
    concurrency: 2,
    scenarios: [
      {
        id: "search",
        category: "simple",
        turns: [
          {
            user: "search for agent lab",
            expect: {
              tools: [{ name: "mock_search", arguments: { query: { contains: "agent lab" } } }],
            },
          },
        ],
      },
      {
        // The model searches; the scenario expects no tool: a failure whose answer is hostile.
        id: "hostile",
        category: "irrelevance",
        turns: [{ user: HOSTILE, expect: { no_tools: true } }],
      },
    ],
  });
}

let folder: ReturnType<typeof temporaryDirectory>;
let store: SqliteSessionStore;

beforeEach(() => {
  folder = temporaryDirectory();
  store = new SqliteSessionStore(join(folder.path, "lab.sqlite3"));
});
afterEach(() => {
  store.close();
  folder.remove();
});

/** The report without the time it was generated. */
function comparable(report: ExperimentReport): Omit<ExperimentReport, "generated_at"> {
  const { generated_at: _generated, ...rest } = report;
  return rest;
}

describe("runExperiment", () => {
  it("hands the suite's prices to each session and prices every cell from its usage rows", async () => {
    const suite = Suite.parse({
      ...smallSuite(),
      repetitions: 1,
      prices: { sim: { input: 1, output: 2 } },
    });
    const { report, experiment_id } = await runExperiment({
      store,
      suite,
      providers: createLabProviders(),
    });
    const sessions = store.findSessionsByExperiment(experiment_id);
    for (const session of sessions) {
      expect(session.config.prices).toEqual({ sim: { input: 1, output: 2 } });
    }
    for (const run of report.runs) {
      const { session } = store.usageSummary(run.session_id);
      expect(run.cost_source).toBe("estimated");
      expect(run.cost_usd).toBeCloseTo(
        (session.prompt_tokens * 1 + session.completion_tokens * 2) / 1_000_000,
        12,
      );
    }
    for (const cell of report.cells) {
      const runs = report.runs.filter((run) => run.cell === cell.cell);
      expect(cell.cost_source).toBe("estimated");
      expect(cell.cost_usd).toBeCloseTo(
        runs.reduce((sum, run) => sum + (run.cost_usd ?? 0), 0),
        12,
      );
      expect(cell.cost_usd).toBeGreaterThan(0);
    }
  });

  it("runs cells × scenarios × repetitions as tagged sessions and reports per cell", async () => {
    const suite = smallSuite();
    const progress: ExperimentProgress[] = [];
    const outcome = await runExperiment({
      store,
      suite,
      suiteFile: "small.yaml",
      onProgress: (state) => progress.push(state),
      providers: createLabProviders(),
    });

    const experimentId = experimentIdOf(suite);
    expect(outcome).toMatchObject({
      experiment_id: experimentId,
      total: 8,
      skipped: 0,
      finished: 8,
      stopped: false,
      errors: [],
    });
    const sessions = store.findSessionsByExperiment(experimentId);
    expect(sessions).toHaveLength(8);
    const tags = sessions.map((session) => ExperimentTag.parse(session.config.experiment));
    expect(new Set(tags.map((tag) => tag.run_key)).size).toBe(8);
    const search = sessions.find(
      (session) =>
        (session.config.experiment as ExperimentTag).run_key === "dual_agent · sim · sim/search/2",
    );
    expect(search?.title).toBe("small · dual_agent · sim · search #2");
    expect(search?.tool_invocation_mode).toBe("dual_agent");
    expect(search?.config.experiment).toMatchObject({
      id: experimentId,
      suite: "small",
      cell: "dual_agent · sim · sim",
      scenario: "search",
      category: "simple",
      repetition: 2,
      suite_file: "small.yaml",
      expect: [{ tools: [{ name: "mock_search" }], no_tools: false }],
    });
    for (const session of sessions) {
      expect(isRunComplete(store.listTurns(session.id), 1)).toBe(true);
    }

    // One progress report with the plan, then one per finished run.
    expect(progress).toHaveLength(9);
    expect(progress[0]).toEqual({ done: 0, total: 8, skipped: 0, failed_runs: 0, current: null });
    expect(progress.at(-1)).toMatchObject({ done: 8, total: 8, skipped: 0, failed_runs: 0 });
    expect(progress.at(-1)?.current?.run_key).toMatch(/\/(search|hostile)\/2$/);

    const { report } = outcome;
    expect(report).toMatchObject({ experiment_id: experimentId, suite: "small", simulated: true });
    expect(report.runs).toHaveLength(8);
    expect(report.cells.map((cell) => [cell.label, cell.runs, cell.successes])).toEqual([
      ["chat_agent_tools · sim", 4, 2],
      ["dual_agent · sim", 4, 2],
    ]);
    for (const cell of report.cells) {
      expect(cell.by_category).toEqual({
        simple: { runs: 2, successes: 2 },
        irrelevance: { runs: 2, successes: 0 },
      });
    }
    const failed = report.runs.filter((run) => !run.score.success);
    expect(failed.map((run) => run.scenario)).toEqual(["hostile", "hostile", "hostile", "hostile"]);
    expect(failed[0]?.score.failures[0]).toContain("expected no tool call");

    // The model's answer quotes the hostile query; the HTML report shows it, escaped.
    const html = renderHtmlReport(report);
    expect(failed[0]?.turns[0]?.answer).toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html.toLowerCase()).not.toContain("<script");
  });

  it("resumes: a second run starts no session and reports the same", async () => {
    const suite = smallSuite();
    const first = await runExperiment({ store, suite, providers: createLabProviders() });
    const ids = store.findSessionsByExperiment(first.experiment_id).map((session) => session.id);

    const progress: ExperimentProgress[] = [];
    const second = await runExperiment({
      store,
      suite,
      onProgress: (state) => progress.push(state),
      providers: createLabProviders(),
    });
    expect(second).toMatchObject({ total: 8, skipped: 8, finished: 8, stopped: false });
    expect(progress).toEqual([{ done: 8, total: 8, skipped: 8, failed_runs: 0, current: null }]);
    expect(
      store.findSessionsByExperiment(first.experiment_id).map((session) => session.id),
    ).toEqual(ids);
    expect(comparable(second.report)).toEqual(comparable(first.report));

    // More repetitions of the same suite: the same experiment, only the new runs run.
    const more = await runExperiment({
      store,
      suite,
      repetitions: 3,
      providers: createLabProviders(),
    });
    expect(more).toMatchObject({ experiment_id: first.experiment_id, total: 12, skipped: 8 });
    expect(store.findSessionsByExperiment(first.experiment_id)).toHaveLength(12);
    expect(more.report.cells.map((cell) => cell.runs)).toEqual([6, 6]);
  });

  it("stops on the signal, keeps what finished, and a resume runs exactly the missing runs", async () => {
    const suite = smallSuite();
    const controller = new AbortController();
    // Every run calls mock_search once. A lane starts a run only after finishing one, so by the
    // fourth call (concurrency 2) a run has finished; that call stops the experiment and waits,
    // so its run is in flight when the signal comes: deterministic, and instant.
    let calls = 0;
    const tools = createBuiltinTools().map((tool) =>
      tool.name !== "mock_search"
        ? tool
        : {
            ...tool,
            execute: (args: Record<string, unknown>, context: ToolContext) => {
              calls += 1;
              if (calls !== 4) return tool.execute(args, context);
              controller.abort(new Error("stop"));
              return new Promise((_resolve, reject) => {
                const stop = () => reject(new Error("interrupted"));
                if (context.signal.aborted) stop();
                context.signal.addEventListener("abort", stop, { once: true });
              });
            },
          },
    );
    const stopped = await runExperiment({
      store,
      suite,
      concurrency: 2,
      signal: controller.signal,
      providers: createLabProviders({ builtins: tools }),
    });
    expect(stopped.stopped).toBe(true);
    expect(stopped.finished).toBeGreaterThanOrEqual(1);
    expect(stopped.finished).toBeLessThanOrEqual(3);
    // The partial report holds exactly the finished runs.
    expect(stopped.report.runs).toHaveLength(stopped.finished);

    const afterStop = await findExperimentRuns(store, stopped.experiment_id);
    const incomplete = afterStop.filter((run) => !run.complete);
    expect(incomplete.length).toBeGreaterThanOrEqual(1);
    expect(incomplete.every((run) => run.turns.every((turn) => turn.status === "cancelled"))).toBe(
      true,
    );
    const finishedIds = afterStop.filter((run) => run.complete).map((run) => run.session.id);

    const resumed = await runExperiment({
      store,
      suite,
      concurrency: 4,
      providers: createLabProviders({ builtins: tools }),
    });
    expect(resumed).toMatchObject({ total: 8, skipped: stopped.finished, finished: 8 });
    expect(resumed.stopped).toBe(false);

    const runs = await findExperimentRuns(store, stopped.experiment_id);
    expect(runs).toHaveLength(8);
    expect(runs.every((run) => run.complete)).toBe(true);
    expect(new Set(runs.map((run) => run.tag.run_key)).size).toBe(8);
    const ids = new Set(runs.map((run) => run.session.id));
    for (const id of finishedIds) expect(ids.has(id)).toBe(true);
    for (const run of incomplete) {
      expect(ids.has(run.session.id)).toBe(false);
      expect(store.getSession(run.session.id)).toBeNull();
    }
    expect(resumed.report.runs).toHaveLength(8);
  });

  it("a run whose turn the lab's database failed could not run: it is not scored, and a resume runs it again", async () => {
    const suite = smallSuite();
    // As a full disk (or a database restart) would: the answers cannot be stored.
    const refuse = new Database(store.path);
    refuse.exec(`
      CREATE TRIGGER refuse_answers BEFORE INSERT ON messages WHEN NEW.role = 'assistant'
      BEGIN SELECT RAISE(ABORT, 'no space left on device'); END`);
    const broken = await runExperiment({ store, suite, providers: createLabProviders() });
    expect(broken.finished).toBe(0);
    expect(broken.errors).toHaveLength(8);
    expect(broken.errors[0]?.message).toMatch(
      /^a turn of the run could not be recorded: the database refused the write: no space left on device \(SQLITE_CONSTRAINT_TRIGGER\)$/,
    );
    refuse.exec("DROP TRIGGER refuse_answers");
    refuse.close();
    const resumed = await runExperiment({ store, suite, providers: createLabProviders() });
    expect(resumed).toMatchObject({ skipped: 0, finished: 8, errors: [] });
    const clean = await runExperiment({
      store,
      suite: smallSuite(),
      providers: createLabProviders(),
    });
    expect(comparable(resumed.report)).toStrictEqual(comparable(clean.report));
  });

  it("a run whose second turn could not even be claimed leaves no session behind (nor one whose first could not)", async () => {
    const suite = Suite.parse({
      ...smallSuite(),
      scenarios: [
        {
          id: "two-turns",
          category: "multi_turn",
          turns: [{ user: "search for agent lab" }, { user: "and file a ticket about it" }],
        },
      ],
    });
    const refuse = new Database(store.path);
    for (const turn of [2, 1]) {
      // As a database that goes away between two turns of a run: the next claim is refused.
      refuse.exec(`
        CREATE TRIGGER refuse_claims BEFORE INSERT ON turns WHEN NEW.turn_index = ${turn}
        BEGIN SELECT RAISE(ABORT, 'no space left on device'); END`);
      const broken = await runExperiment({ store, suite, providers: createLabProviders() });
      expect(broken.finished).toBe(0);
      expect(broken.errors).toHaveLength(4);
      expect(broken.errors[0]?.message).toMatch(/no space left on device/);
      // No part of a run stays to be counted, listed or scored: the experiment has no sessions.
      expect(await findExperimentRuns(store, broken.experiment_id)).toEqual([]);
      expect(store.listSessions()).toEqual([]);
      refuse.exec("DROP TRIGGER refuse_claims");
    }
    refuse.close();
    const resumed = await runExperiment({ store, suite, providers: createLabProviders() });
    expect(resumed).toMatchObject({ skipped: 0, finished: 4, errors: [] });
  });

  it("refuses a cell whose model cannot be built before storing anything", async () => {
    const suite = Suite.parse({
      ...smallSuite(),
      matrix: { modes: ["dual_agent"], chat_models: ["sim"] },
      config: { chat_agent: { base_url: "http://127.0.0.1:9/v1" } },
    });
    await expect(runExperiment({ store, suite, providers: createLabProviders() })).rejects.toThrow(
      /cell dual_agent · sim: .*simulated model takes no base_url/,
    );
    expect(store.listSessions()).toEqual([]);
  });

  it("validates its counts", async () => {
    await expect(
      runExperiment({
        store,
        suite: smallSuite(),
        concurrency: 0,
        providers: createLabProviders(),
      }),
    ).rejects.toThrow(/runExperiment: concurrency/);
  });
});

describe("isRunComplete", () => {
  it("needs every turn stored, each completed, failed or at max_rounds", () => {
    const turns = (...statuses: string[]) => statuses.map((status) => ({ status }));
    expect(isRunComplete(turns("completed", "failed"), 2)).toBe(true);
    expect(isRunComplete(turns("max_rounds"), 1)).toBe(true);
    expect(isRunComplete(turns("completed"), 2)).toBe(false);
    expect(isRunComplete(turns("completed", "cancelled"), 2)).toBe(false);
    expect(isRunComplete(turns("interrupted"), 1)).toBe(false);
    expect(isRunComplete(turns("running"), 1)).toBe(false);
    expect(isRunComplete([], 0)).toBe(false);
  });
});

describe("runExperiment: repetitions on the simulated model", () => {
  it("gives each repetition its own seed unless the suite set one, so seeded draws differ", async () => {
    const suite = smallSuite({ malformed_arguments_rate: 0.5 });
    await runExperiment({ store, suite, providers: createLabProviders() });
    const seeds = (await store.findSessionsByExperiment(experimentIdOf(suite))).map((session) => {
      const tag = ExperimentTag.parse(session.config.experiment);
      const chat = session.config.chat_agent as { options: { seed: number } };
      return `${tag.cell}/${tag.scenario}#${tag.repetition}:${chat.options.seed}`;
    });
    expect(seeds.filter((entry) => entry.endsWith("#1:42"))).toHaveLength(4);
    expect(seeds.filter((entry) => entry.endsWith("#2:43"))).toHaveLength(4);

    const pinned = smallSuite({ seed: 7 });
    await runExperiment({ store, suite: pinned, providers: createLabProviders() });
    const pinnedSeeds = (await store.findSessionsByExperiment(experimentIdOf(pinned))).map(
      (session) => (session.config.chat_agent as { options: { seed: number } }).options.seed,
    );
    expect(new Set(pinnedSeeds)).toStrictEqual(new Set([7]));
  });
});

describe("runExperiment: approvals", () => {
  function ticketSuite(approval?: "all" | "none"): Suite {
    return Suite.parse({
      name: "tickets",
      matrix: { modes: ["chat_agent_tools", "dual_agent"], chat_models: ["sim"] },
      ...(approval === undefined ? {} : { approval }),
      scenarios: [
        {
          id: "ticket",
          category: "simple",
          turns: [
            {
              user: "file a ticket about flaky tests",
              expect: { tools: [{ name: "mock_ticket" }] },
            },
          ],
        },
      ],
    });
  }
  /** Every approval decision of every run, and the tool results the model read. */
  function outcomes() {
    const sessions = store.listSessions();
    return {
      decisions: sessions.flatMap((session) =>
        store
          .listAuditLogs(session.id)
          .filter((row) => row.event === "approval_decided")
          .map((row) => row.details),
      ),
      results: sessions.flatMap((session) =>
        store
          .listMessages(session.id)
          .filter((message) => message.role === "tool")
          .map((message) => message.content),
      ),
    };
  }

  it("a suite approves by policy by default, recorded as approved by policy", async () => {
    await runExperiment({ store, suite: ticketSuite(), providers: createLabProviders() });
    const { decisions, results } = outcomes();
    expect(decisions).toHaveLength(2);
    for (const decision of decisions) {
      expect(decision).toMatchObject({
        decision: "approve",
        decided_by: "policy",
        reason: "approved by policy",
      });
    }
    for (const result of results) expect(JSON.parse(result)).toMatchObject({ status: "open" });
  });

  it("approval: none denies by policy; no ticket is filed", async () => {
    await runExperiment({ store, suite: ticketSuite("none"), providers: createLabProviders() });
    const { decisions, results } = outcomes();
    expect(decisions.map((decision) => [decision.decision, decision.decided_by])).toEqual([
      ["deny", "policy"],
      ["deny", "policy"],
    ]);
    for (const result of results) expect(result).toMatch(/denied by policy/);
  });
});
