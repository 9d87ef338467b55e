import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { SessionRecord } from "../domain/records.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, runCliJson, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

/** Issue 15, point 1: `agent-lab fork`, `replay` and `retry`, spawned as the built CLI. */

const lab = freshLab();
// Each test spawns the CLI four to six times, each running turns on the simulated model.
vi.setConfig({ testTimeout: 240_000 });

async function sourceWithTwoTurns(): Promise<string> {
  const first = await runCliJson<TurnReport>([
    "--db",
    lab.db,
    "run",
    "--approve",
    "none",
    "search for agent lab",
  ]);
  await runCliJson(["--db", lab.db, "run", "--session", first.session_id, "now search for vitest"]);
  return first.session_id;
}

const readStore = <T>(read: (store: SqliteSessionStore) => T): T => {
  const store = new SqliteSessionStore(lab.db);
  try {
    return read(store);
  } finally {
    store.close();
  }
};

describe("agent-lab fork", () => {
  it("copies turns 1..N into a new session with the flags over the source's config", async () => {
    const source = await sourceWithTwoTurns();
    const session = await runCliJson<SessionRecord>([
      "--db",
      lab.db,
      "fork",
      source,
      "--turn",
      "1",
      "--mode",
      "chat_agent_tools",
      "--system",
      "Be brief.",
    ]);
    expect(session.tool_invocation_mode).toBe("chat_agent_tools");
    expect(session.config).toMatchObject({
      derived_from: { kind: "fork", session_id: source, turn_index: 1 },
      chat_agent: { system_prompt: "Be brief." },
      tags: ["fork"],
    });
    const turns = readStore((store) => store.listTurns(session.id));
    expect(turns.map((turn) => turn.user_message)).toStrictEqual(["search for agent lab"]);
    // A unique prefix names the session, as for run and show.
    const text = await runCli(["--db", lab.db, "fork", source.slice(0, 8), "--turn", "2"]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^forked ${source} at turn 2 into \\S+ \\(dual_agent\\)\\n`),
    );
  });

  it("refuses a turn past the last, an unknown session and a bad config field, naming each", async () => {
    const source = await sourceWithTwoTurns();
    const past = await runCli(["--db", lab.db, "fork", source, "--turn", "3"]);
    expect(past.status).toBe(1);
    expect(stderrLines(past)).toStrictEqual([
      `agent-lab: turn_index: session ${source} has turns 1 to 2, so turn_index 3 is past its last turn`,
    ]);
    const unknown = await runCli(["--db", lab.db, "fork", "nope", "--turn", "0"]);
    expect(stderrLines(unknown)).toStrictEqual([
      "agent-lab: session not found: nope (no id is or starts with it; agent-lab sessions lists them)",
    ]);
    const notANumber = await runCli(["--db", lab.db, "fork", source, "--turn", "x"]);
    expect(stderrLines(notANumber)).toStrictEqual([
      'agent-lab: --turn: expected a whole number >= 0, got "x"',
    ]);
    const file = join(lab.folder, "overrides.yaml");
    writeFileSync(file, "max_rounds: 0\n");
    const bad = await runCli(["--db", lab.db, "fork", source, "--turn", "1", "--config", file]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^agent-lab: config\.max_rounds: /);
    expect(readStore((store) => store.listSessions())).toHaveLength(1);
  });
});

describe("agent-lab replay", () => {
  it("runs the source's user messages as a new session, printing each turn, then the compare hint", async () => {
    const source = await sourceWithTwoTurns();
    const result = await runCli([
      "--db",
      lab.db,
      "replay",
      source.slice(0, 8),
      "--mode",
      "chat_agent_tools",
      "--approve",
      "none",
    ]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("── turn 1 of 2 ──");
    expect(result.stdout).toContain("── turn 2 of 2 ──");
    const id = /replayed 2 of 2 turns of \S+ into (\S+)\n/.exec(result.stdout)?.[1] ?? "";
    expect(result.stdout).toContain(`/compare?a=${source}&b=${id}`);
    const replayed = readStore((store) => ({
      session: store.getSession(id),
      turns: store.listTurns(id),
    }));
    expect(replayed.session?.tool_invocation_mode).toBe("chat_agent_tools");
    expect(replayed.turns.map((turn) => [turn.user_message, turn.status])).toStrictEqual([
      ["search for agent lab", "completed"],
      ["now search for vitest", "completed"],
    ]);
  });

  it("refuses a session with nothing to replay", async () => {
    const empty = readStore((store) => store.createSession({ title: "empty", config: {} }));
    const result = await runCli(["--db", lab.db, "replay", empty]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toStrictEqual([
      `agent-lab: session ${empty} has no finished turns to replay`,
    ]);
  });
});

describe("agent-lab retry", () => {
  it("runs a failed turn's message again as a new turn, and refuses a completed one", async () => {
    const id = readStore((store) => {
      const created = store.createSession({
        title: "t",
        config: { tool_invocation_mode: "chat_agent_tools" },
      });
      const { turn_index } = store.claimTurn(created, {
        user_message: "search for agent lab",
        runner: "test",
      });
      store.completeTurn(created, { turn_index, wall_time_ms: 1, status: "failed" });
      store.appendAudit(created, {
        event: "turn_failed",
        details: { code: "provider_error", message: "the endpoint refused" },
        turn_index,
      });
      return created;
    });
    const result = await runCli(["--db", lab.db, "retry", id.slice(0, 8)]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^retrying turn 1 \(failed\): search for agent lab\n/);
    const turns = readStore((store) => store.listTurns(id));
    expect(turns.map((turn) => [turn.turn_index, turn.user_message, turn.status])).toStrictEqual([
      [1, "search for agent lab", "failed"],
      [2, "search for agent lab", "completed"],
    ]);

    // `show` prints the failed turn's error under it.
    const shown = await runCli(["--db", lab.db, "show", id]);
    // A chat_agent_tools session names no event agent: none runs in that mode.
    expect(shown.stdout.split("\n")[1]).toBe("mode chat_agent_tools · chat agent sim");
    expect(shown.stdout).toContain(
      "── turn 1 · failed · wall 1 ms\nuser: search for agent lab\nerror (provider_error): the endpoint refused\n",
    );
    const refused = await runCli(["--db", lab.db, "retry", id]);
    expect(refused.status).toBe(1);
    expect(stderrLines(refused)).toStrictEqual([
      `agent-lab: turn 2 of session ${id} is completed: only a failed, cancelled, interrupted, max_rounds turn can be retried`,
    ]);
    const unknownTurn = await runCli(["--db", lab.db, "retry", id, "--turn", "7"]);
    expect(stderrLines(unknownTurn)).toStrictEqual([
      `agent-lab: turn 7 of session ${id} has not been started`,
    ]);
    const unknown = await runCli(["--db", lab.db, "retry", "nope"]);
    expect(stderrLines(unknown)).toStrictEqual([
      "agent-lab: session not found: nope (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });
});
