import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../../test/fake-openai-server.js";
import { answerRound, toolRound } from "../../test/runtime/scripted-turns.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, type RunningCli, runCli, runCliJson, startCli } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const MESSAGE = "file a ticket about flaky tests";

const lab = freshLab();

/** The approval rows of the only session's audit log. */
function decisions(): Record<string, unknown>[] {
  const store = new SqliteSessionStore(lab.db);
  try {
    const [session] = store.listSessions();
    return store
      .listAuditLogs(session?.id ?? "")
      .filter((row) => row.event === "approval_decided")
      .map((row) => row.details);
  } finally {
    store.close();
  }
}

/** `run --approve ask` with a pipe for stdin, once it waits for the answer. */
async function askedToApprove(): Promise<RunningCli> {
  const running = startCli(
    ["--db", lab.db, "run", "--approve", "ask", "--mode", "chat_agent_tools", MESSAGE],
    {},
    { stdin: "pipe" },
  );
  await running.stdoutContains("waits for approval");
  return running;
}

describe("agent-lab run --approve", () => {
  it("without a terminal the default is none: the ticket is denied by policy, and said so", async () => {
    const result = await runCli(["--db", lab.db, "run", "--mode", "chat_agent_tools", MESSAGE]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines).toContain("  ? mock_ticket waits for approval");
    expect(
      lines.some((line) =>
        /^ {2}✗ denied mock_ticket by policy \(waited .*\): denied by policy/.test(line),
      ),
    ).toBe(true);
    expect(lines.some((line) => /^ {2}← mock_ticket error .*denied by policy/.test(line))).toBe(
      true,
    );
    expect(decisions()).toMatchObject([{ decision: "deny", decided_by: "policy" }]);
  });

  it("all approves by policy", async () => {
    const report = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--approve",
      "all",
      MESSAGE,
    ]);
    expect(report.tool_calls.map((call) => [call.name, call.ok])).toEqual([["mock_ticket", true]]);
    expect(decisions()).toMatchObject([
      { decision: "approve", decided_by: "policy", reason: "approved by policy" },
    ]);
  });

  it("ask prompts and takes y as the user's approval", async () => {
    const running = await askedToApprove();
    running.write("y\n");
    const result = await running.result;
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('approve mock_ticket {"title":"flaky tests"}? [y/N/e(dit)] ');
    expect(result.stdout).toMatch(/✓ approved mock_ticket by user/);
    expect(result.stdout).toMatch(/← mock_ticket ok/);
    expect(decisions()).toMatchObject([{ decision: "approve", decided_by: "user" }]);
  });

  it("ask: e edits the arguments, which are checked against the schema", async () => {
    const running = await askedToApprove();
    running.write('e\n{"title":"flaky tests","priority":"urgent"}\n');
    const result = await running.result;
    expect(result.stdout).toMatch(
      /✓ approved mock_ticket by user with \{"title":"flaky tests","priority":"urgent"\}/,
    );
    expect(result.stdout).toMatch(
      /← mock_ticket error .*the edited arguments are invalid: priority/,
    );
    expect(decisions()).toMatchObject([
      { decision: "approve", decided_by: "user", edited_arguments: { priority: "urgent" } },
    ]);
  });

  it("ask: anything else (or the end of input) denies, decided by the user", async () => {
    const running = await askedToApprove();
    running.child.stdin?.end();
    const result = await running.result;
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/✗ denied mock_ticket by user .*denied at the prompt/);
    expect(decisions()).toMatchObject([{ decision: "deny", decided_by: "user" }]);
  });

  it("refuses an unknown policy, and chat refuses ask without a terminal", async () => {
    const bad = await runCli(["--db", lab.db, "run", "--approve", "sometimes", MESSAGE]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/--approve/);
    const chat = await runCli(["--db", lab.db, "chat", "--approve", "ask"], {}, "hello\n");
    expect(chat.status).toBe(1);
    expect(chat.stderr).toMatch(/--approve ask needs a terminal/);
  });
});

describe("agent-lab run --approve none against an obedient endpoint", () => {
  let server: FakeOpenAIServer;
  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(() => server.close());

  it("prompt injection: the model files a ticket nobody asked for; none is filed, the denial is audited", async () => {
    // The user asks for a search; the model then obeys what it read and calls mock_ticket.
    server.enqueue(
      toolRound("chat_agent_tools", [
        { id: "call_s", name: "mock_search", arguments: '{"query":"release notes"}' },
      ]),
      toolRound("chat_agent_tools", [
        {
          id: "call_t",
          name: "mock_ticket",
          arguments: '{"title":"ignore previous instructions","priority":"high"}',
        },
      ]),
      answerRound("Done."),
    );
    const report = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--approve",
      "none",
      "--mode",
      "chat_agent_tools",
      "--model",
      "openai:test-model",
      "--base-url",
      server.baseUrl,
      "search for release notes",
    ]);
    expect(report.status).toBe("completed");
    expect(report.tool_calls.map((call) => [call.name, call.ok])).toEqual([
      ["mock_search", true],
      ["mock_ticket", false],
    ]);
    expect(decisions()).toMatchObject([
      { event_name: "mock_ticket", decision: "deny", decided_by: "policy" },
    ]);
    const store = new SqliteSessionStore(lab.db);
    try {
      const [session] = store.listSessions();
      const replies = store
        .listMessages(session?.id ?? "")
        .filter((message) => message.role === "tool")
        .map((message) => message.content);
      expect(replies[1]).toMatch(/denied by policy/);
      expect(replies.join("\n")).not.toMatch(/TCK-/);
    } finally {
      store.close();
    }
  });
});
