import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runTurn } from "../composition/run-turn.js";
import type {
  CellRun,
  CellSummary,
  ExperimentListItem,
  ExperimentReportWithProgress,
  ExperimentTag,
  RunScore,
  TurnExpectation,
} from "../domain/experiment.js";
import type { ErrorBody } from "./http-errors.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

const EXPERIMENT = "smoke-2026";
/** Two cells; the second id has a slash and spaces, so it must travel URL-encoded. */
const TOOLS_CELL = "chat_agent_tools · sim · sim";
const DUAL_CELL = "named/dual · sim";

const SEARCH: TurnExpectation = {
  tools: [{ name: "mock_search", arguments: { query: { contains: "agent lab" } } }],
  no_tools: false,
  answer_contains: [],
};
/** Expects a ticket where the message asks for a search: the run fails. */
const WRONG_TOOL: TurnExpectation = {
  tools: [{ name: "mock_ticket", arguments: {} }],
  no_tools: false,
  answer_contains: [],
};
const NO_TOOLS: TurnExpectation = { tools: [], no_tools: true, answer_contains: [] };

interface RunSpec {
  cell: string;
  scenario: string;
  category: ExperimentTag["category"];
  repetition: number;
  expect: TurnExpectation[];
  experiment?: string;
}

function tagOf(spec: RunSpec): ExperimentTag {
  return {
    id: spec.experiment ?? EXPERIMENT,
    suite: spec.experiment ? "other suite" : "smoke suite",
    cell: spec.cell,
    cell_label: spec.cell === DUAL_CELL ? "Named dual" : spec.cell,
    scenario: spec.scenario,
    category: spec.category,
    repetition: spec.repetition,
    run_key: `${spec.cell}/${spec.scenario}/${spec.repetition}`,
    expect: spec.expect,
  };
}

function configOf(spec: RunSpec): Record<string, unknown> {
  return {
    tool_invocation_mode: spec.cell === DUAL_CELL ? "dual_agent" : "chat_agent_tools",
    chat_agent: { model: "sim" },
    experiment: tagOf(spec),
  };
}

describe("HTTP API: experiments", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  /** Runs real turns on the sim model in a new tagged session; returns its id. */
  async function runScenario(spec: RunSpec, messages: string[]): Promise<string> {
    let sessionId: string | undefined;
    for (const message of messages) {
      for await (const event of runTurn({
        store: lab.store,
        message,
        config: configOf(spec),
        ...(sessionId ? { session_id: sessionId } : {}),
      })) {
        if (event.type === "turn_start") sessionId = event.session_id;
        if (event.type === "turn_end") expect(event.status).toBe("completed");
      }
    }
    if (sessionId === undefined) throw new Error("no turn started");
    return sessionId;
  }

  /** A tagged session whose one turn has `status` (or is still running), written directly. */
  function storedRun(spec: RunSpec, status: "running" | "cancelled"): string {
    const id = lab.store.createSession({ title: spec.scenario, config: configOf(spec) });
    lab.store.startTurn(id, { turn_index: 1, user_message: "search for agent lab" });
    if (status !== "running")
      lab.store.completeTurn(id, { turn_index: 1, wall_time_ms: 5, status });
    return id;
  }

  async function getJson<T>(path: string): Promise<T> {
    const response = await lab.api(path);
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  }

  async function expectNotFound(path: string, message: RegExp) {
    const response = await lab.api(path);
    expect(response.status).toBe(404);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("not_found");
    expect(body.error.message).toMatch(message);
  }

  /**
   * The tools cell: search ×2 (pass; the first repetition was cancelled once and resumed),
   * chit-chat (pass), wrong tool (fail), and a two-turn run cut off after its first turn.
   * The dual cell: search (pass), wrong tool (fail), and a search still running.
   */
  async function seedExperiment() {
    const search = (cell: string, repetition: number): RunSpec => ({
      cell,
      scenario: "search",
      category: "simple",
      repetition,
      expect: [SEARCH],
    });
    const wrong = (cell: string): RunSpec => ({
      cell,
      scenario: "wrong-tool",
      category: "simple",
      repetition: 1,
      expect: [WRONG_TOOL],
    });
    const cancelled = storedRun(search(TOOLS_CELL, 1), "cancelled");
    const ids = {
      cancelled,
      toolsSearch1: await runScenario(search(TOOLS_CELL, 1), ["search for agent lab"]),
      toolsSearch2: await runScenario(search(TOOLS_CELL, 2), ["search for agent lab"]),
      toolsChat: await runScenario(
        {
          cell: TOOLS_CELL,
          scenario: "chit-chat",
          category: "irrelevance",
          repetition: 1,
          expect: [NO_TOOLS],
        },
        ["hello there"],
      ),
      toolsWrong: await runScenario(wrong(TOOLS_CELL), ["search for agent lab"]),
      toolsCutOff: await runScenario(
        {
          cell: TOOLS_CELL,
          scenario: "two-turns",
          category: "multi_turn",
          repetition: 1,
          expect: [SEARCH, NO_TOOLS],
        },
        ["search for agent lab"],
      ),
      dualSearch: await runScenario(search(DUAL_CELL, 1), ["search for agent lab"]),
      dualWrong: await runScenario(wrong(DUAL_CELL), ["search for agent lab"]),
      dualRunning: storedRun(search(DUAL_CELL, 2), "running"),
    };
    // Neither an untagged session nor another experiment's runs belong to it.
    lab.store.createSession({ title: "plain", config: { tool_invocation_mode: "dual_agent" } });
    const other = await runScenario({ ...search(TOOLS_CELL, 1), experiment: "other-exp" }, [
      "search for agent lab",
    ]);
    return { ...ids, other };
  }

  it("lists experiments, reports their cells and drills into a cell's runs", async () => {
    const ids = await seedExperiment();

    const list = await getJson<{ experiments: ExperimentListItem[] }>("/api/experiments");
    expect(list).toMatchObject({ next_cursor: null });
    expect(list.experiments).toStrictEqual([
      {
        id: "other-exp",
        suite: "other suite",
        sessions: 1,
        first_created_at: expect.any(String),
        last_created_at: expect.any(String),
        last_updated_at: expect.any(String),
        revision: expect.any(Number),
        running: false,
      },
      {
        id: EXPERIMENT,
        suite: "smoke suite",
        sessions: 9,
        first_created_at: expect.any(String),
        last_created_at: expect.any(String),
        last_updated_at: expect.any(String),
        revision: expect.any(Number),
        running: false,
      },
    ]);
    const smoke = list.experiments[1] as ExperimentListItem;
    expect(smoke.first_created_at <= smoke.last_created_at).toBe(true);

    const report = await getJson<ExperimentReportWithProgress>(`/api/experiments/${EXPERIMENT}`);
    expect(report).toMatchObject({
      experiment_id: EXPERIMENT,
      suite: "smoke suite",
      simulated: true,
      // The cut-off two-turn run and the running search; the cancelled attempt was resumed.
      incomplete: 2,
    });
    expect(Number.isNaN(Date.parse(report.generated_at))).toBe(false);
    expect(report.cells.map((cell) => [cell.cell, cell.label])).toStrictEqual([
      [TOOLS_CELL, TOOLS_CELL],
      [DUAL_CELL, "Named dual"],
    ]);
    const [tools, dual] = report.cells as [CellSummary, CellSummary];
    expect(tools).toMatchObject({
      runs: 4,
      successes: 3,
      success_rate: 0.75,
      by_category: { simple: { runs: 3, successes: 2 }, irrelevance: { runs: 1, successes: 1 } },
      cost_usd: 0,
      cost_source: "estimated",
    });
    expect(tools.success_ci[0]).toBeLessThan(0.75);
    expect(tools.success_ci[1]).toBeGreaterThan(0.75);
    expect(tools.tokens_per_turn).toBeGreaterThan(0);
    expect(tools.wall_p50_ms).not.toBeNull();
    expect(dual).toMatchObject({
      runs: 2,
      successes: 1,
      success_rate: 0.5,
      by_category: { simple: { runs: 2, successes: 1 } },
    });
    // Every counted run is a finished session of this experiment, once per run key.
    const counted = report.runs.map((run) => run.session_id).sort();
    expect(counted).toStrictEqual(
      [
        ids.toolsSearch1,
        ids.toolsSearch2,
        ids.toolsChat,
        ids.toolsWrong,
        ids.dualSearch,
        ids.dualWrong,
      ].sort(),
    );
    const wrongRun = report.runs.find((run) => run.session_id === ids.toolsWrong);
    expect(wrongRun?.score.success).toBe(false);
    expect(wrongRun?.score.failures.join("\n")).toMatch(/mock_ticket/);

    // The drill-down: finished runs scored (scenario order, then repetition), then the unfinished.
    const toolsRuns = await getJson<{ sessions: CellRun[] }>(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions`,
    );
    expect(
      toolsRuns.sessions.map((run) => [
        run.session_id,
        run.scenario,
        run.repetition,
        run.incomplete,
        run.score?.success ?? null,
      ]),
    ).toStrictEqual([
      [ids.toolsSearch1, "search", 1, false, true],
      [ids.toolsSearch2, "search", 2, false, true],
      [ids.toolsChat, "chit-chat", 1, false, true],
      [ids.toolsWrong, "wrong-tool", 1, false, false],
      [ids.toolsCutOff, "two-turns", 1, true, null],
    ]);
    expect(toolsRuns.sessions[0]).toMatchObject({
      run_key: `${TOOLS_CELL}/search/1`,
      category: "simple",
      cost_usd: 0,
      cost_source: "estimated",
    });
    const score = toolsRuns.sessions[3]?.score as RunScore;
    expect(score).toStrictEqual(
      report.runs.find((run) => run.session_id === ids.toolsWrong)?.score,
    );

    // Failed first over the whole cell, then the unfinished, then the passed, each as listed.
    const failing = await getJson<{ sessions: CellRun[] }>(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions?order=failed_first`,
    );
    expect(failing.sessions.map((run) => run.session_id)).toStrictEqual([
      ids.toolsWrong,
      ids.toolsCutOff,
      ids.toolsSearch1,
      ids.toolsSearch2,
      ids.toolsChat,
    ]);
    const firstFailing = await getJson<{ sessions: CellRun[]; next_cursor: string }>(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions?order=failed_first&limit=1`,
    );
    expect(firstFailing.sessions.map((run) => run.session_id)).toStrictEqual([ids.toolsWrong]);
    const nextFailing = await getJson<{ sessions: CellRun[] }>(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions?order=failed_first&limit=1&cursor=${firstFailing.next_cursor}`,
    );
    expect(nextFailing.sessions.map((run) => run.session_id)).toStrictEqual([ids.toolsCutOff]);
    // A cursor of one order is not one of the other.
    const mixed = await lab.api(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions?limit=1&cursor=${firstFailing.next_cursor}`,
    );
    expect(mixed.status).toBe(400);
    expect(((await mixed.json()) as ErrorBody).error.message).toMatch(/in run order/);

    const dualRuns = await getJson<{ sessions: CellRun[] }>(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(DUAL_CELL)}/sessions`,
    );
    expect(dualRuns.sessions.map((run) => [run.session_id, run.incomplete])).toStrictEqual([
      [ids.dualSearch, false],
      [ids.dualWrong, false],
      [ids.dualRunning, true],
    ]);
    expect(dualRuns.sessions[2]).toMatchObject({
      score: null,
      cost_usd: null,
      cost_source: "unknown",
    });
  });

  it("answers 404 for an unknown experiment or cell, and an empty list without experiments", async () => {
    expect(await getJson("/api/experiments")).toStrictEqual({ experiments: [], next_cursor: null });
    await expectNotFound("/api/experiments/nope", /experiment not found: nope/);
    await expectNotFound("/api/experiments/nope/cells/x/sessions", /experiment not found: nope/);

    await runScenario(
      { cell: TOOLS_CELL, scenario: "search", category: "simple", repetition: 1, expect: [SEARCH] },
      ["search for agent lab"],
    );
    await expectNotFound(
      `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent("no such cell")}/sessions`,
      /has no cell no such cell/,
    );
    // A tag that does not parse is no experiment.
    lab.store.createSession({
      title: "broken tag",
      config: { tool_invocation_mode: "dual_agent", experiment: { id: "broken" } },
    });
    await expectNotFound("/api/experiments/broken", /experiment not found: broken/);
    const list = await getJson<{ experiments: ExperimentListItem[] }>("/api/experiments");
    expect(list.experiments.map((experiment) => experiment.id)).toStrictEqual([EXPERIMENT]);
  });

  it("reports a cell whose every run is unfinished with no runs, and counts them", async () => {
    storedRun(
      { cell: TOOLS_CELL, scenario: "search", category: "simple", repetition: 1, expect: [SEARCH] },
      "running",
    );
    const report = await getJson<ExperimentReportWithProgress>(`/api/experiments/${EXPERIMENT}`);
    expect(report.incomplete).toBe(1);
    expect(report.runs).toStrictEqual([]);
    expect(report.cells).toMatchObject([
      { cell: TOOLS_CELL, runs: 0, successes: 0, success_rate: 0, by_category: {} },
    ]);
  });

  it("pages the experiment list and a cell's runs with keyset cursors", async () => {
    const ids = await seedExperiment();
    const first = await getJson<{ experiments: ExperimentListItem[]; next_cursor: string | null }>(
      "/api/experiments?limit=1",
    );
    expect(first.experiments.map((experiment) => experiment.id)).toStrictEqual(["other-exp"]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await getJson<{ experiments: ExperimentListItem[]; next_cursor: string | null }>(
      `/api/experiments?limit=1&cursor=${first.next_cursor}`,
    );
    expect(second.experiments.map((experiment) => experiment.id)).toStrictEqual([EXPERIMENT]);
    expect(second.next_cursor).toBeNull();
    // Narrowed to one, as a page watching it polls for its revision.
    const one = await getJson<{ experiments: ExperimentListItem[] }>(
      `/api/experiments?experiment=${EXPERIMENT}`,
    );
    expect(one.experiments.map((experiment) => [experiment.id, experiment.revision])).toStrictEqual(
      [[EXPERIMENT, second.experiments[0]?.revision]],
    );
    expect(
      (await getJson<{ experiments: unknown[] }>("/api/experiments?experiment=nope")).experiments,
    ).toStrictEqual([]);

    const cellPath = `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions`;
    const whole = await getJson<{ sessions: CellRun[]; next_cursor: string | null }>(cellPath);
    expect(whole.next_cursor).toBeNull();
    const paged: CellRun[] = [];
    let cursor: string | null = null;
    do {
      const page: { sessions: CellRun[]; next_cursor: string | null } = await getJson(
        `${cellPath}?limit=2${cursor !== null ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      paged.push(...page.sessions);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(paged).toStrictEqual(whole.sessions);
    expect(paged.map((run) => run.session_id)).toContain(ids.toolsCutOff);

    // The run a cursor names is deleted: the next page starts where it stood. (Its place is all the
    // cursor keeps: a run before it deleted too would shift the list by one more.)
    const firstTwo = await getJson<{ sessions: CellRun[]; next_cursor: string }>(
      `${cellPath}?limit=2`,
    );
    const gone = firstTwo.sessions[1]?.session_id as string;
    expect((await lab.api(`/api/sessions/${gone}`, { method: "DELETE" })).status).toBe(204);
    const after = await getJson<{ sessions: CellRun[] }>(
      `${cellPath}?limit=2&cursor=${firstTwo.next_cursor}`,
    );
    expect(after.sessions.map((run) => run.session_id)).toStrictEqual(
      whole.sessions.slice(2, 4).map((run) => run.session_id),
    );
    // Another cell's cursor is not this cell's.
    const dualPath = `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(DUAL_CELL)}/sessions`;
    const foreign = await lab.api(`${dualPath}?limit=2&cursor=${firstTwo.next_cursor}`);
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as ErrorBody).error.message).toMatch(
      /^cursor: not a cursor of cell .* runs in experiment /,
    );
  });

  it("refuses a bad limit or cursor with 400 naming it", async () => {
    await seedExperiment();
    const cellPath = `/api/experiments/${EXPERIMENT}/cells/${encodeURIComponent(TOOLS_CELL)}/sessions`;
    for (const [path, message] of [
      ["/api/experiments?limit=0", /limit/],
      ["/api/experiments?limit=many", /limit/],
      ["/api/experiments?cursor=nope", /cursor: not a cursor of this list/],
      [`${cellPath}?limit=501`, /limit is at most 500/],
      [`${cellPath}?cursor=nope`, /cursor: not a cursor of this list/],
      [`/api/experiments/${EXPERIMENT}?runs=no`, /runs must be true or false/],
      [`${cellPath}?order=worst`, /order must be run or failed_first/],
      // An unknown parameter is named, not ignored: a typo would look like a filter that works.
      ["/api/experiments?experimnet=x", /experimnet/],
      [`/api/experiments/${EXPERIMENT}?run=false`, /run\b/],
      [`${cellPath}?outcome=failed`, /outcome/],
    ] as const) {
      const response = await lab.api(path);
      expect(response.status, path).toBe(400);
      const body = (await response.json()) as ErrorBody;
      expect(body.error.code).toBe("invalid_input");
      expect(body.error.message).toMatch(message);
    }
  });

  it("serves a report from its cache until a run of the experiment finishes", async () => {
    const ids = await seedExperiment();
    const path = `/api/experiments/${EXPERIMENT}`;
    const built = await lab.api(path);
    expect(built.headers.get("x-agent-lab-cache")).toBe("miss");
    const first = (await built.json()) as ExperimentReportWithProgress;
    const cached = await lab.api(path);
    expect(cached.headers.get("x-agent-lab-cache")).toBe("hit");
    // The very report, not a rebuilt one (a rebuild would carry a new generated_at).
    expect(await cached.json()).toStrictEqual(first);
    // Without its runs: the same cells, from the same cached build.
    const slim = await lab.api(`${path}?runs=false`);
    expect(slim.headers.get("x-agent-lab-cache")).toBe("hit");
    expect(await slim.json()).toStrictEqual({ ...first, runs: [] });
    const drill = await lab.api(`${path}/cells/${encodeURIComponent(DUAL_CELL)}/sessions`);
    expect(drill.headers.get("x-agent-lab-cache")).toBe("hit");

    // Another experiment's new run leaves this report cached.
    await runScenario(
      {
        cell: TOOLS_CELL,
        scenario: "search",
        category: "simple",
        repetition: 2,
        expect: [SEARCH],
        experiment: "other-exp",
      },
      ["search for agent lab"],
    );
    expect((await lab.api(path)).headers.get("x-agent-lab-cache")).toBe("hit");

    // A new run of this experiment finishes: the next request rebuilds, and counts it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await runScenario(
      { cell: DUAL_CELL, scenario: "search", category: "simple", repetition: 3, expect: [SEARCH] },
      ["search for agent lab"],
    );
    const rebuilt = await lab.api(path);
    expect(rebuilt.headers.get("x-agent-lab-cache")).toBe("miss");
    const after = (await rebuilt.json()) as ExperimentReportWithProgress;
    expect(after.runs.length).toBe(first.runs.length + 1);
    expect(after.cells.find((cell) => cell.cell === DUAL_CELL)?.runs).toBe(3);
    expect((await lab.api(path)).headers.get("x-agent-lab-cache")).toBe("hit");
    // The cell's runs, listed for the drill-down above, are listed again for the new report.
    const redrill = await lab.api(`${path}/cells/${encodeURIComponent(DUAL_CELL)}/sessions`);
    const { sessions: dualRuns } = (await redrill.json()) as { sessions: CellRun[] };
    expect(dualRuns.filter((run) => !run.incomplete).map((run) => run.session_id)).toStrictEqual(
      after.runs.filter((run) => run.cell === DUAL_CELL).map((run) => run.session_id),
    );
    expect(dualRuns.filter((run) => !run.incomplete)).toHaveLength(3);

    // A session deleted from the experiment invalidates it too.
    lab.store.deleteSession(after.runs[0]?.session_id as string);
    const shrunk = await lab.api(path);
    expect(shrunk.headers.get("x-agent-lab-cache")).toBe("miss");
    const smaller = (await shrunk.json()) as ExperimentReportWithProgress;
    expect(smaller.runs.length).toBe(after.runs.length - 1);

    // A running run's turn ends: no session is added or removed, the report is rebuilt all the same.
    await new Promise((resolve) => setTimeout(resolve, 5));
    lab.store.completeTurn(ids.dualRunning, { turn_index: 1, wall_time_ms: 5 });
    const finished = await lab.api(path);
    expect(finished.headers.get("x-agent-lab-cache")).toBe("miss");
    const last = (await finished.json()) as ExperimentReportWithProgress;
    expect(last.incomplete).toBe(smaller.incomplete - 1);
    expect(last.runs.map((run) => run.session_id)).toContain(ids.dualRunning);
  });
});
