import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { completionStream, FakeOpenAIServer, streamReply } from "../../test/fake-openai-server.js";
import type { ToolInvocationMode } from "../domain/session-config.js";
import type { UsageSummary } from "../domain/usage.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, runCliJson, startCli, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const MESSAGE = "search for agent lab and file a ticket about flaky tests";

const lab = freshLab();

function writeConfig(name: string, config: unknown): string {
  const path = join(lab.folder, name);
  writeFileSync(path, typeof config === "string" ? config : JSON.stringify(config));
  return path;
}

describe.each<ToolInvocationMode>(["dual_agent", "chat_agent_tools"])(
  "agent-lab run in %s",
  (mode) => {
    it("streams the answer with one line per tool call and result, then a footer", async () => {
      const result = await runCli([
        "--db",
        lab.db,
        "run",
        "--approve",
        "all",
        "--mode",
        mode,
        MESSAGE,
      ]);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      const lines = result.stdout.split("\n");
      expect(lines).toContain('  → mock_search {"query":"agent lab"}');
      expect(lines).toContain('  → mock_ticket {"title":"flaky tests"}');
      expect(lines.some((line) => /^ {2}← mock_search ok [\d.]+ ms$/.test(line))).toBe(true);
      expect(lines.some((line) => /^ {2}← mock_ticket ok [\d.]+ ms$/.test(line))).toBe(true);
      expect(result.stdout).toContain("Here is what the tools returned:");
      expect(result.stdout).toContain('mock_ticket returned "flaky tests"');
      const footer = lines.filter(Boolean).at(-1) ?? "";
      expect(footer).toMatch(
        /^── session [0-9a-f-]{36} · turn 1 · completed · [\d,]+ tokens.* · 4 calls · TTFT [\d.]+ ms · wall [\d.]+ ms \(simulated model\)$/,
      );
    });

    it("prints one JSON object whose usage is the stored roll-up, and continues the session", async () => {
      const first = await runCliJson<TurnReport>([
        "--db",
        lab.db,
        "run",
        "--approve",
        "all",
        "--mode",
        mode,
        MESSAGE,
      ]);
      expect(first).toMatchObject({ turn_index: 1, status: "completed", mode, error: null });
      expect(first.answer).toContain("Here is what the tools returned:");
      expect(first.tool_calls).toHaveLength(2);
      expect(first.tool_calls.map((call) => [call.name, call.arguments, call.ok])).toEqual([
        ["mock_search", { query: "agent lab" }, true],
        ["mock_ticket", { title: "flaky tests" }, true],
      ]);
      for (const call of first.tool_calls) {
        expect(call).toEqual({
          id: expect.any(String),
          round_index: 1,
          name: call.name,
          arguments: call.arguments,
          raw_arguments: JSON.stringify(call.arguments),
          ok: true,
          used_fallback: false,
          latency_ms: expect.any(Number),
          content: expect.stringContaining("{"),
        });
      }

      const usage = await runCliJson<UsageSummary>(["--db", lab.db, "usage", first.session_id]);
      expect(usage.turns).toEqual([first.usage]);
      expect(first.usage.call_count).toBe(usage.calls.length);
      expect(first.usage).toMatchObject({ call_count: 4, tool_count: 2, fallback_count: 0 });

      const second = await runCliJson<TurnReport>([
        "--db",
        lab.db,
        "run",
        "--approve",
        "all",
        "--session",
        first.session_id,
        "file a ticket about slow builds",
      ]);
      expect(second).toMatchObject({
        session_id: first.session_id,
        turn_index: 2,
        status: "completed",
        mode,
      });
      expect(second.tool_calls.map((call) => call.arguments)).toEqual([{ title: "slow builds" }]);
    });
  },
);

describe("agent-lab run: refusals", () => {
  it("refuses another mode on an existing session with the mismatch line", async () => {
    const { session_id } = await runCliJson<TurnReport>(["--db", lab.db, "run", "hello there"]);
    const result = await runCli([
      "--db",
      lab.db,
      "run",
      "--session",
      session_id,
      "--mode",
      "chat_agent_tools",
      "again",
    ]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual([
      "agent-lab: session tool invocation mode mismatch: persisted=dual_agent requested=chat_agent_tools",
    ]);
    const summary = await runCliJson<UsageSummary>(["--db", lab.db, "usage", session_id]);
    expect(summary.turns).toHaveLength(1);
  });

  it("names the config file and the invalid field", async () => {
    const path = writeConfig("bad.json", { max_rounds: 0, chat_agent: { model: "sim" } });
    const result = await runCli(["--db", lab.db, "run", "--config", path, "hello"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      `agent-lab: config file ${path}: max_rounds: Too small: expected number to be >=1`,
    ]);
  });

  it("says so when the config file does not exist or is not JSON", async () => {
    const missing = join(lab.folder, "missing.json");
    const result = await runCli(["--db", lab.db, "run", "--config", missing, "hello"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      `agent-lab: config file ${missing}: no such file or folder`,
    ]);

    const broken = writeConfig("broken.json", "{ not json");
    const parsed = await runCli(["--db", lab.db, "run", "--config", broken, "hello"]);
    expect(parsed.status).toBe(1);
    expect(stderrLines(parsed)).toHaveLength(1);
    expect(parsed.stderr).toMatch(/^agent-lab: config file .*broken\.json: not valid JSON/);
  });

  it("refuses a bad model string before creating a session", async () => {
    const result = await runCli(["--db", lab.db, "run", "--model", "gpt-4", "hello"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      'agent-lab: chat_agent: model: "gpt-4" is not a model string; use sim, sim:NAME or openai:MODEL',
    ]);
    expect(await runCliJson(["--db", lab.db, "sessions"])).toMatchObject({ sessions: [] });
  });

  it("refuses an unknown tool in the config file before creating a session", async () => {
    const path = writeConfig("tools.json", { tools: ["mock_search", "web_browse"] });
    const result = await runCli(["--db", lab.db, "run", "--config", path, "hello"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      "agent-lab: tools: unknown tool web_browse; available: mock_search, mock_ticket",
    ]);
    expect(await runCliJson(["--db", lab.db, "sessions"])).toMatchObject({ sessions: [] });
  });

  it("lets the flags override the config file", async () => {
    const path = writeConfig("config.json", {
      tool_invocation_mode: "dual_agent",
      chat_agent: { model: "sim:from-file" },
      max_rounds: 3,
    });
    const report = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--config",
      path,
      "--mode",
      "chat_agent_tools",
      "--event-model",
      "sim:events",
      "search for vitest",
    ]);
    expect(report.mode).toBe("chat_agent_tools");
    const shown = await runCliJson<{ session: { config: Record<string, unknown> } }>([
      "--db",
      lab.db,
      "show",
      report.session_id,
    ]);
    expect(shown.session.config).toMatchObject({
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: { model: "sim:from-file" },
      event_agent: { model: "sim:events" },
      max_rounds: 3,
    });
  });
});

describe("agent-lab run: where the database is", () => {
  it("uses $AGENT_LAB_DB when there is no --db", async () => {
    const report = await runCliJson<TurnReport>(["run", "hello"], { AGENT_LAB_DB: lab.db });
    const store = new SqliteSessionStore(lab.db);
    try {
      expect(store.getSession(report.session_id)).not.toBeNull();
    } finally {
      store.close();
    }
  });

  it("defaults to $XDG_DATA_HOME/agent-lab/lab.sqlite3, creating the folder", async () => {
    const dataHome = join(lab.folder, "data");
    const report = await runCliJson<TurnReport>(["run", "hello"], {
      XDG_DATA_HOME: dataHome,
      HOME: lab.folder,
    });
    const store = new SqliteSessionStore(join(dataHome, "agent-lab", "lab.sqlite3"));
    try {
      expect(store.getSession(report.session_id)).not.toBeNull();
    } finally {
      store.close();
    }
  });

  it("fails with one line when the database cannot be opened", async () => {
    const result = await runCli(["--db", join(lab.folder, "no", "such", "lab.db"), "run", "hi"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toHaveLength(1);
    expect(result.stderr).toMatch(/^agent-lab: cannot open database .*lab\.db/);
  });
});

describe("agent-lab run against an OpenAI-compatible endpoint", () => {
  let server: FakeOpenAIServer;
  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(() => server.close());

  it("streams the endpoint's answer and never prints the key", async () => {
    const key = "sk-test-secret-do-not-print-4711";
    server.enqueue(
      streamReply(completionStream({ text: ["Hello ", "from the ", "fake endpoint."] })),
    );
    const result = await runCli(
      [
        "--db",
        lab.db,
        "run",
        "--model",
        "openai:test-model",
        "--event-model",
        "openai:test-model",
        "--base-url",
        server.baseUrl,
        "say hello",
      ],
      { OPENAI_API_KEY: key },
    );
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Hello from the fake endpoint.");
    // openai:test-model is in no price table and the endpoint reported no cost.
    expect(result.stdout).toMatch(/· turn 1 · completed · 15 tokens · cost unknown · 1 call · /);
    expect(result.stdout).not.toContain("simulated");
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    expect(server.requests[0]?.body).toMatchObject({ model: "test-model", stream: true });
    expect(result.stdout + result.stderr).not.toContain(key);
    expect(readFileSync(lab.db).includes(key)).toBe(false);
  });
});

describe("agent-lab run: Ctrl-C", () => {
  it("cancels the turn, keeps its partial answer marked cancelled, and exits 130", async () => {
    const config = writeConfig("slow.json", {
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: { options: { tokens_per_second: 20 } },
    });
    const running = startCli([
      "--db",
      lab.db,
      "run",
      "--approve",
      "all",
      "--config",
      config,
      MESSAGE,
    ]);
    await running.stdoutContains("Here is");
    running.child.kill("SIGINT");
    const result = await running.result;
    expect(result.status).toBe(130);
    expect(result.stdout).toMatch(/· turn 1 · cancelled · /);
    expect(result.stdout).not.toContain("priority normal).");
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(
        /^agent-lab: turn 1 of session \S+ was cancelled; what it produced is stored$/,
      ),
    ]);

    const {
      sessions: [session],
    } = await runCliJson<{ sessions: { id: string }[] }>(["--db", lab.db, "sessions"]);
    const shown = await runCliJson<{
      messages: { role: string; content: string }[];
      audit: { event: string; details: Record<string, unknown> }[];
    }>(["--db", lab.db, "show", session?.id ?? ""]);
    expect(shown.audit.map((entry) => entry.event)).toContain("turn_cancelled");
    expect(shown.audit.find((entry) => entry.event === "turn_end")?.details.status).toBe(
      "cancelled",
    );
    const partial = shown.messages.at(-1);
    expect(partial?.role).toBe("assistant");
    expect(partial?.content).toMatch(/^Here is/);
    const store = new SqliteSessionStore(lab.db);
    try {
      expect(store.listTurns(session?.id ?? "").map((turn) => turn.status)).toEqual(["cancelled"]);
    } finally {
      store.close();
    }
  });
});
