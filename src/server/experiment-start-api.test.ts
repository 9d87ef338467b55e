import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import type { SessionPageItem } from "../domain/session-query.js";
import type { ErrorBody } from "./http-errors.js";
import type { ExperimentRunProgress } from "./running-experiments.js";
import type { ScenarioComparison, ScenarioList } from "./scenario-view.js";
import type { SuiteCatalogPage } from "./suites-catalog.js";
import { parseSse, type SseMessage, startTestServer, type TestServer } from "./test-fixtures.js";

/** Issue 13: experiments started, watched, cancelled and compared over HTTP, on the sim model. */

const SCENARIOS = `
scenarios:
  - id: search
    category: simple
    turns:
      - user: search for agent lab
        expect:
          tools: [{ name: mock_search, arguments: { query: { contains: agent lab } } }]
  - id: wrong-tool
    category: simple
    turns:
      - user: search for agent lab
        expect:
          tools: [{ name: mock_ticket }]
`;

/** Two cells (the modes) × two scenarios × two repetitions: eight quick runs. */
const QUICK = `name: quick
description: two modes, one passing and one failing scenario
config: { tools: [mock_search, mock_ticket] }
matrix: { modes: [chat_agent_tools, dual_agent] }
repetitions: 2
concurrency: 2
${SCENARIOS}`;

/** One cell whose sim model streams slowly, one run at a time: time to cancel mid-run. */
const SLOW = `name: slow
config:
  tools: [mock_search, mock_ticket]
  chat_agent: { model: sim, options: { tokens_per_second: 40 } }
matrix: { modes: [chat_agent_tools] }
repetitions: 3
concurrency: 1
${SCENARIOS}`;

const CHAT_CELL = "chat_agent_tools · sim · sim";
const DUAL_CELL = "dual_agent · sim · sim";

interface Started {
  experiment_id: string;
  total: number;
  skipped: number;
  events_url: string;
}

describe("HTTP API: starting experiments", () => {
  let folder: ReturnType<typeof temporaryDirectory>;
  let lab: TestServer;
  beforeEach(async () => {
    folder = temporaryDirectory();
    writeFileSync(join(folder.path, "quick.yaml"), QUICK);
    writeFileSync(join(folder.path, "slow.yml"), SLOW);
    writeFileSync(join(folder.path, "broken.yaml"), "name: broken\nscenarios: 3\n");
    writeFileSync(join(folder.path, "notes.txt"), "not a suite");
    lab = await startTestServer({ suitesDirs: [folder.path] });
  });
  afterEach(async () => {
    await lab.close();
    folder.remove();
  });

  async function start(body: unknown): Promise<Started> {
    const response = await lab.api("/api/experiments", { method: "POST", json: body });
    expect(response.status, JSON.stringify(body)).toBe(202);
    return (await response.json()) as Started;
  }

  async function refused(body: unknown, status: number, message: RegExp): Promise<void> {
    const response = await lab.api("/api/experiments", { method: "POST", json: body });
    expect(response.status, JSON.stringify(body)).toBe(status);
    expect(((await response.json()) as ErrorBody).error.message).toMatch(message);
  }

  /** The whole event stream (it ends after the experiment's end event). */
  async function events(url: string): Promise<SseMessage[]> {
    const response = await lab.api(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    return parseSse(await response.text());
  }

  /** Reads the stream until `until` holds for a progress event, then lets go of it. */
  async function watchUntil(
    url: string,
    until: (progress: ExperimentRunProgress) => boolean,
  ): Promise<ExperimentRunProgress> {
    const response = await lab.api(url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended first: ${text}`);
        text += decoder.decode(value, { stream: true });
        for (const message of parseSse(text.slice(0, text.lastIndexOf("\n\n") + 2))) {
          if (message.event !== "progress") continue;
          const progress = JSON.parse(message.data) as ExperimentRunProgress;
          if (until(progress)) return progress;
        }
      }
    } finally {
      await reader.cancel();
    }
  }

  async function sessions(query: string): Promise<SessionPageItem[]> {
    const response = await lab.api(`/api/sessions?limit=500${query}`);
    return ((await response.json()) as { sessions: SessionPageItem[] }).sessions;
  }

  it("lists the bundled suites and the configured folder's, with cells; a broken file is named", async () => {
    const response = await lab.api("/api/suites");
    expect(response.status).toBe(200);
    const { suites, invalid } = (await response.json()) as SuiteCatalogPage;
    expect(suites.map((suite) => suite.name)).toStrictEqual([
      "bundled",
      "mcp-everything",
      "quick",
      "slow",
    ]);
    expect(suites[2]).toStrictEqual({
      name: "quick",
      file: join(folder.path, "quick.yaml"),
      description: "two modes, one passing and one failing scenario",
      scenarios: 2,
      categories: ["simple"],
      cells: [
        { id: CHAT_CELL, label: "chat_agent_tools · sim" },
        { id: DUAL_CELL, label: "dual_agent · sim" },
      ],
      repetitions: 2,
      concurrency: 2,
    });
    expect(suites[0]?.cells.length).toBe(4);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]?.file).toBe(join(folder.path, "broken.yaml"));
    expect(invalid[0]?.error).toMatch(/broken\.yaml:2:\d+: scenarios/);
    const anonymous = await fetch(new URL("/api/suites", lab.url));
    expect(anonymous.status).toBe(401);
  });

  it("starts a suite, streams progress to done, hides its runs from the session list and compares a scenario", async () => {
    const started = await start({ suite: "quick" });
    expect(started).toMatchObject({ total: 8, skipped: 0 });
    expect(started.experiment_id).toMatch(/^quick-[0-9a-f]{8}$/);
    expect(started.events_url).toBe(`/api/experiments/${started.experiment_id}/events`);
    const messages = await events(started.events_url);
    const end = messages.at(-1) as SseMessage;
    expect(end.event).toBe("done");
    expect(JSON.parse(end.data)).toStrictEqual({
      outcome: {
        experiment_id: started.experiment_id,
        total: 8,
        skipped: 0,
        finished: 8,
        errors: [],
      },
    });
    const progress = messages.slice(0, -1).map((message) => {
      expect(message.event).toBe("progress");
      return JSON.parse(message.data) as ExperimentRunProgress;
    });
    const finished = progress.map((item) => item.finished);
    expect(finished).toStrictEqual([...finished].sort((a, b) => a - b));
    expect(progress.every((item) => item.total === 8 && item.skipped === 0)).toBe(true);
    const lasts = progress.flatMap((item) => (item.last === null ? [] : [item.last]));
    expect(lasts.length).toBeGreaterThan(0);
    for (const last of lasts) {
      // The search scenario passes; asking for a ticket where the model searches fails.
      expect(last.success, last.run_key).toBe(last.run_key.includes("/search/"));
    }

    // Over now: a late watcher gets the final progress and the end again.
    const late = await events(started.events_url);
    expect(late.map((message) => message.event)).toStrictEqual(["progress", "done"]);
    expect(JSON.parse(late[0]?.data ?? "")).toMatchObject({ finished: 8, running: 0 });
    expect(late[1]).toStrictEqual(end);
    const list = (await (await lab.api("/api/experiments")).json()) as {
      experiments: { id: string; running: boolean; progress?: unknown }[];
    };
    expect(list.experiments).toStrictEqual([
      expect.objectContaining({ id: started.experiment_id, running: false }),
    ]);
    expect(list.experiments[0]).not.toHaveProperty("progress");

    // Its eight sessions live on the experiment's side.
    lab.store.createSession({ title: "my own", config: {} });
    expect((await sessions("")).map((session) => session.title)).toStrictEqual(["my own"]);
    expect(await sessions("&include=experiments")).toHaveLength(9);
    expect(await sessions(`&experiment=${started.experiment_id}`)).toHaveLength(8);

    // The scenario picker's list: every scenario the runs have, by category then id.
    const listed = (await (
      await lab.api(`/api/experiments/${started.experiment_id}/scenarios`)
    ).json()) as ScenarioList;
    expect(listed.scenarios.map((item) => item.scenario).sort()).toStrictEqual([
      "search",
      "wrong-tool",
    ]);
    expect(listed.scenarios).toContainEqual({ scenario: "search", category: "simple" });
    const byCategory = [...listed.scenarios].sort(
      (a, b) => a.category.localeCompare(b.category) || a.scenario.localeCompare(b.scenario),
    );
    expect(listed.scenarios).toStrictEqual(byCategory);
    expect((await lab.api("/api/experiments/nope/scenarios")).status).toBe(404);

    const view = await lab.api(`/api/experiments/${started.experiment_id}/scenarios/search`);
    expect(view.status).toBe(200);
    const search = (await view.json()) as ScenarioComparison;
    expect(search).toMatchObject({ scenario: "search", category: "simple" });
    expect(
      search.cells.map((cell) => [
        cell.cell,
        cell.runs_total,
        cell.successes_total,
        cell.incomplete,
      ]),
    ).toStrictEqual([
      [CHAT_CELL, 2, 2, 0],
      [DUAL_CELL, 2, 2, 0],
    ]);
    for (const cell of search.cells) {
      expect(cell.runs.map((run) => run.repetition)).toStrictEqual([1, 2]);
      for (const run of cell.runs) {
        expect(run.success).toBe(true);
        expect(run.failures).toStrictEqual([]);
        expect(run.answer.length).toBeGreaterThan(0);
        expect(run.tool_calls[0]).toMatchObject({ turn: 1, name: "mock_search", ok: true });
        expect(String(run.tool_calls[0]?.arguments.query)).toMatch(/agent lab/);
      }
    }
    const wrong = (await (
      await lab.api(`/api/experiments/${started.experiment_id}/scenarios/wrong-tool`)
    ).json()) as ScenarioComparison;
    for (const run of wrong.cells.flatMap((cell) => cell.runs)) {
      expect(run.success).toBe(false);
      expect(run.failures.join("\n")).toMatch(/mock_ticket/);
    }
    const missing = await lab.api(`/api/experiments/${started.experiment_id}/scenarios/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).error.message).toMatch(/no run of scenario nope/);

    // Starting it again finds every run done.
    const again = await start({ suite: "quick" });
    expect(again).toMatchObject({ experiment_id: started.experiment_id, total: 8, skipped: 8 });
    const replay = await events(again.events_url);
    expect(replay.at(-1)).toStrictEqual({
      event: "done",
      data: JSON.stringify({
        outcome: {
          experiment_id: started.experiment_id,
          total: 8,
          skipped: 8,
          finished: 8,
          errors: [],
        },
      }),
    });
  });

  it("runs the chosen cells only, as the same experiment", async () => {
    const started = await start({ suite: "quick", cells: [DUAL_CELL], repetitions: 1 });
    expect(started).toMatchObject({ total: 2, skipped: 0 });
    expect((await events(started.events_url)).at(-1)?.event).toBe("done");
    const runs = await sessions(`&experiment=${started.experiment_id}`);
    expect(runs.map((run) => run.tool_invocation_mode)).toStrictEqual(["dual_agent", "dual_agent"]);
    // Run on its own, the cell keeps its place in the whole suite (its report orders by it).
    const places = runs.map(
      (run) =>
        (lab.store.getSession(run.id)?.config.experiment as { cell_order?: number })?.cell_order,
    );
    const quick = await (await lab.api("/api/suites")).json();
    const dualPlace = (quick as { suites: { name: string; cells: { id: string }[] }[] }).suites
      .find((suite) => suite.name === "quick")
      ?.cells.findIndex((cell) => cell.id === DUAL_CELL);
    expect(dualPlace).toBeGreaterThan(0);
    expect(places).toStrictEqual([dualPlace, dualPlace]);
    // The whole suite later: the dual cell's first repetitions are already there.
    const all = await start({ suite: "quick" });
    expect(all).toMatchObject({ experiment_id: started.experiment_id, total: 8, skipped: 2 });
    expect((await events(all.events_url)).at(-1)?.event).toBe("done");
  });

  it("refuses a second start while it runs; cancel stops it, a new start runs only the missing runs", async () => {
    const started = await start({ suite: "slow" });
    expect(started).toMatchObject({ total: 6, skipped: 0 });
    await refused({ suite: "slow" }, 409, /already running in this server/);
    await refused({ suite: "slow", repetitions: 1 }, 409, /already running/);
    const running = (await (await lab.api("/api/experiments")).json()) as {
      experiments: { id: string; running: boolean; progress?: ExperimentRunProgress }[];
    };
    await watchUntil(started.events_url, (progress) => progress.finished >= 1);
    const list = (await (await lab.api("/api/experiments")).json()) as typeof running;
    expect(list.experiments[0]).toMatchObject({
      id: started.experiment_id,
      running: true,
      progress: { total: 6 },
    });

    const cancel = await lab.api(`/api/experiments/${started.experiment_id}/cancel`, {
      method: "POST",
      json: {},
    });
    expect(cancel.status).toBe(202);
    const tail = await events(started.events_url);
    const end = tail.at(-1) as SseMessage;
    expect(end.event).toBe("cancelled");
    const stoppedAt = JSON.parse(end.data) as ExperimentRunProgress;
    expect(stoppedAt.finished).toBeGreaterThanOrEqual(1);
    expect(stoppedAt.finished).toBeLessThan(6);
    expect(
      (
        await lab.api(`/api/experiments/${started.experiment_id}/cancel`, {
          method: "POST",
          json: {},
        })
      ).status,
    ).toBe(404);

    const before = await sessions(`&experiment=${started.experiment_id}`);
    const finishedBefore = before.filter((session) => session.last_status === "completed");
    expect(finishedBefore).toHaveLength(stoppedAt.finished);
    expect(before.some((session) => session.last_status === "running")).toBe(false);

    const resumed = await start({ suite: "slow" });
    expect(resumed).toMatchObject({ experiment_id: started.experiment_id, total: 6 });
    expect(resumed.skipped).toBe(stoppedAt.finished);
    const done = (await events(resumed.events_url)).at(-1) as SseMessage;
    expect(done.event).toBe("done");
    expect(JSON.parse(done.data).outcome).toMatchObject({ total: 6, finished: 6, errors: [] });
    const after = await sessions(`&experiment=${started.experiment_id}`);
    const completed = after.filter((session) => session.last_status === "completed");
    expect(completed).toHaveLength(6);
    // The runs finished before the cancel were kept, not run again.
    for (const session of finishedBefore)
      expect(completed.map((item) => item.id)).toContain(session.id);
  });

  it("refuses bad bodies naming the field, unknown suites and paths with 404", async () => {
    await refused({}, 400, /^request body: suite: /);
    await refused({ suite: 5 }, 400, /^request body: suite: /);
    await refused({ suite: "quick", repetitions: 0 }, 400, /^request body: repetitions: /);
    await refused({ suite: "quick", concurrency: 65 }, 400, /^request body: concurrency: /);
    await refused({ suite: "quick", cells: [] }, 400, /^request body: cells: name at least one/);
    await refused(
      { suite: "quick", cells: ["nope"] },
      400,
      /^request body: cells\.0: suite quick has no cell "nope"/,
    );
    await refused({ suite: "quick", colour: "red" }, 400, /^request body: .*colour/);
    await refused({ suite: "nope" }, 404, /^suite not found: nope/);
    await refused({ suite: join(folder.path, "quick.yaml") }, 404, /^suite not found/);
    await refused({ suite: "broken" }, 404, /^suite not found: broken/);
    const notJson = await lab.api("/api/experiments", { method: "POST", body: "suite=quick" });
    expect(notJson.status).toBe(415);
    expect((await lab.api("/api/experiments/none/events")).status).toBe(404);
    // Cancel carries no body, but like every POST it must say JSON (a cross-site form cannot).
    expect((await lab.api("/api/experiments/none/cancel", { method: "POST" })).status).toBe(415);
    expect(
      (await lab.api("/api/experiments/none/cancel", { method: "POST", json: {} })).status,
    ).toBe(404);
    expect(await sessions("&include=experiments")).toStrictEqual([]);
  });

  it("answers a watcher of an experiment not run by this server with one idle event of the store's counts", async () => {
    const tag = {
      id: "stored-1",
      suite: "stored",
      cell: CHAT_CELL,
      cell_label: CHAT_CELL,
      scenario: "search",
      category: "simple",
      repetition: 1,
      run_key: `${CHAT_CELL}/search/1`,
      expect: [{ tools: [], no_tools: true, answer_contains: [] }],
    };
    const id = lab.store.createSession({ title: "stored", config: { experiment: tag } });
    lab.store.startTurn(id, { turn_index: 1, user_message: "hello" });
    lab.store.completeTurn(id, { turn_index: 1, wall_time_ms: 3 });
    const other = { ...tag, repetition: 2, run_key: `${CHAT_CELL}/search/2` };
    lab.store.createSession({ title: "unfinished", config: { experiment: other } });
    expect(await events("/api/experiments/stored-1/events")).toStrictEqual([
      { event: "idle", data: JSON.stringify({ finished: 1, successes: 1, incomplete: 1 }) },
    ]);
  });

  it("cancels a running experiment when the server shuts down, leaving no run marked running", async () => {
    const started = await start({ suite: "slow" });
    await watchUntil(started.events_url, (progress) => progress.running > 0);
    // Connected (headers received) before the server stops taking connections.
    const watching = await lab.api(started.events_url);
    await lab.server.close();
    expect(parseSse(await watching.text()).at(-1)?.event).toBe("cancelled");
    const runs = lab.store.listSessionPage({ experiment: started.experiment_id }).sessions;
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.some((session) => session.last_status === "running")).toBe(false);
  });
});
