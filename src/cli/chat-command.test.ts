import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TurnRecord } from "../domain/records.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, runCliJson, startCli, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const MESSAGE = "search for agent lab and file a ticket about flaky tests";
const PROMPT = "you> ";

const lab = freshLab();

function stored(): { sessions: string[]; turns: TurnRecord[][] } {
  const store = new SqliteSessionStore(lab.db);
  try {
    const sessions = store.listSessions().map((session) => session.id);
    return { sessions, turns: sessions.map((id) => store.listTurns(id)) };
  } finally {
    store.close();
  }
}

/** A config whose chat agent streams slowly enough to be interrupted mid-answer. */
function slowConfig(): string {
  const path = join(lab.folder, "slow.json");
  writeFileSync(
    path,
    JSON.stringify({
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: { options: { tokens_per_second: 15 } },
    }),
  );
  return path;
}

const prompts = (stdout: string) => stdout.split(PROMPT).length - 1;

describe("agent-lab chat", () => {
  it("runs each piped line as a turn of one session, with /usage, until /exit", async () => {
    const result = await runCli(
      ["--db", lab.db, "chat", "--approve", "all"],
      {},
      [MESSAGE, "", "file a ticket about slow builds", "/usage", "/exit", "never sent"].join("\n"),
    );
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const { sessions, turns } = stored();
    expect(sessions).toHaveLength(1);
    const sessionId = sessions[0] ?? "";
    expect(turns[0]?.map((turn) => [turn.user_message, turn.status])).toEqual([
      [MESSAGE, "completed"],
      ["file a ticket about slow builds", "completed"],
    ]);

    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`agent-lab chat · database ${lab.db} (simulated model)`);
    expect(lines).toContain(`${PROMPT}${MESSAGE}`);
    expect(lines).toContain(`(session ${sessionId} created)`);
    expect(lines).toContain('  → mock_search {"query":"agent lab"}');
    expect(lines).toContain('  → mock_ticket {"title":"flaky tests"}');
    expect(lines).toContain('  → mock_ticket {"title":"slow builds"}');
    expect(lines.some((line) => /^ {2}← mock_ticket ok [\d.]+ ms$/.test(line))).toBe(true);
    expect(result.stdout).toContain('mock_ticket returned "flaky tests"');
    expect(result.stdout).toContain('mock_ticket returned "slow builds"');
    expect(lines.filter((line) => /^── turn \d · completed · [\d,]+ tokens/.test(line))).toEqual([
      expect.stringMatching(/^── turn 1 · completed · .* · 4 calls · TTFT [\d.]+ ms · wall /),
      expect.stringMatching(/^── turn 2 · completed · .* · 3 calls · TTFT [\d.]+ ms · wall /),
    ]);

    // /usage prints what `agent-lab usage` prints.
    const usage = await runCli(["--db", lab.db, "usage", sessionId]);
    expect(result.stdout).toContain(usage.stdout);
    expect(lines.find((line) => line.startsWith("TURN"))).toMatch(/^TURN\s+STATUS\s+CALLS\s+TOOLS/);
    expect(lines.find((line) => line.startsWith("2 "))).toMatch(/^2\s+completed\s+3\s+1\s+0\s/);
    expect(lines.find((line) => line.startsWith("total"))).toMatch(/^total\s+7\s+3\s+0\s/);
    // Nothing after /exit runs; /exit leaves without another prompt.
    expect(result.stdout).not.toContain("never sent");
    expect(result.stdout.endsWith(`${PROMPT}/exit\n`)).toBe(true);
  });

  it("ends cleanly at the end of its input, and answers /session, /help and unknown commands", async () => {
    const result = await runCli(
      ["--db", lab.db, "chat", "--title", "Piped"],
      {},
      [
        "/usage",
        "/session",
        "hello there",
        "/session",
        "/help",
        "/bogus",
        "//etc is a folder",
      ].join("\n"),
    );
    expect(result.status).toBe(0);
    expect(stderrLines(result)).toEqual([
      "agent-lab: unknown command /bogus; /help lists the commands",
    ]);
    const { sessions, turns } = stored();
    expect(sessions).toHaveLength(1);
    expect(turns[0]?.map((turn) => turn.user_message)).toEqual(["hello there", "/etc is a folder"]);
    const lines = result.stdout.split("\n");
    expect(lines).toContain("No usage yet: the session starts with your first message.");
    expect(lines).toContain("No session yet: it is created by your first message.");
    expect(lines).toContain(`Session ${sessions[0]}: Piped · 1 turn`);
    expect(lines).toContain("mode dual_agent · chat agent sim · event agent sim (simulated model)");
    expect(lines).toContain(`database ${lab.db}`);
    for (const command of ["/usage", "/session", "/help", "/exit"]) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}${command} `, "m"));
    }
    // The end of input closes the last prompt's line.
    expect(result.stdout.endsWith(`\n${PROMPT}\n`)).toBe(true);
  });

  it("continues an existing session given with --session, and refuses another mode", async () => {
    const first = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--approve",
      "all",
      "--title",
      "Earlier",
      MESSAGE,
    ]);
    const result = await runCli(
      ["--db", lab.db, "chat", "--approve", "all", "--session", first.session_id],
      {},
      "file a ticket about slow builds\n",
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`Session ${first.session_id}: Earlier · 1 turn so far`);
    expect(result.stdout).not.toContain("created)");
    expect(result.stdout).toMatch(/^── turn 2 · completed · /m);
    expect(stored().turns[0]?.map((turn) => turn.status)).toEqual(["completed", "completed"]);

    const refused = await runCli(
      ["--db", lab.db, "chat", "--session", first.session_id, "--mode", "chat_agent_tools"],
      {},
      "hello\n",
    );
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(stderrLines(refused)).toEqual([
      "agent-lab: session tool invocation mode mismatch: persisted=dual_agent requested=chat_agent_tools",
    ]);
    expect(stored().turns[0]).toHaveLength(2);
  });

  it("cancels the running turn on Ctrl-C, stores it cancelled, and goes on to the next line", async () => {
    const running = startCli(
      ["--db", lab.db, "chat", "--approve", "all", "--config", slowConfig()],
      {},
      { stdin: "pipe" },
    );
    running.write(`${MESSAGE}\n`);
    await running.stdoutContains("Here is");
    running.child.kill("SIGINT");
    await running.stdoutContains("· cancelled ·");
    running.write("hello there\n");
    await running.stdoutMatches((stdout) => prompts(stdout) === 3, "the third prompt");
    running.write("/exit\n");
    const result = await running.result;
    expect(result.status).toBe(0);
    expect(stderrLines(result)).toEqual([
      "agent-lab: turn 1 was cancelled; what it produced is stored (Ctrl-C at the empty prompt leaves)",
    ]);
    expect(result.stdout).toMatch(/^── turn 1 · cancelled · /m);
    expect(result.stdout).toMatch(/^── turn 2 · completed · /m);
    expect(result.stdout).not.toContain("priority normal).");
    expect(result.stdout).toContain("Hello! I'm the lab's simulated model.");

    const { sessions, turns } = stored();
    expect(sessions).toHaveLength(1);
    expect(turns[0]?.map((turn) => [turn.user_message, turn.status])).toEqual([
      [MESSAGE, "cancelled"],
      ["hello there", "completed"],
    ]);
    const shown = await runCliJson<{ messages: { turn_index: number; content: string }[] }>([
      "--db",
      lab.db,
      "show",
      sessions[0] ?? "",
    ]);
    const partial = shown.messages.filter((message) => message.turn_index === 1).at(-1);
    expect(partial?.content).toMatch(/^Here is/);
  });

  it("leaves with exit code 130 on Ctrl-C at the empty prompt", async () => {
    const running = startCli(["--db", lab.db, "chat"], {}, { stdin: "pipe" });
    running.write("hello\n");
    await running.stdoutMatches((stdout) => prompts(stdout) === 2, "the second prompt");
    running.child.kill("SIGINT");
    const result = await running.result;
    expect(result.status).toBe(130);
    expect(result.stderr).toBe("");
    expect(stored().turns[0]?.map((turn) => turn.status)).toEqual(["completed"]);
  });

  it("refuses bad flags before creating the database", async () => {
    const result = await runCli(["--db", lab.db, "chat", "--model", "gpt-4"], {}, "hello\n");
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      'agent-lab: chat_agent: model: "gpt-4" is not a model string; use sim, sim:NAME or openai:MODEL',
    ]);
    expect(result.stdout).toBe("");
    expect(existsSync(lab.db)).toBe(false);
  });
});
