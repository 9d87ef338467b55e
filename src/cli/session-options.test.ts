import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, runCliJson, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const lab = freshLab();

function sessionIds(): string[] {
  const store = new SqliteSessionStore(lab.db);
  try {
    return store
      .listSessions()
      .map((session) => session.id)
      .sort();
  } finally {
    store.close();
  }
}

async function newSession(id: string, message = "hello"): Promise<TurnReport> {
  return runCliJson<TurnReport>(["--db", lab.db, "run", "--session", id, "--new", message]);
}

describe("a session id given to run and chat", () => {
  it("refuses an id that names no session, creating nothing, and says how to create one", async () => {
    await newSession("alpha-1");
    for (const args of [
      ["run", "--session", "alpah-1", "hello"],
      ["chat", "--approve", "none", "--session", "alpah-1"],
    ]) {
      const result = await runCli(["--db", lab.db, ...args], {}, "hello\n");
      expect(result.status, args.join(" ")).toBe(1);
      expect(result.stdout).toBe("");
      expect(stderrLines(result)).toEqual([
        "agent-lab: session not found: alpah-1 (no id is or starts with it; pass --new to create a session with this id; agent-lab sessions lists the others)",
      ]);
    }
    expect(sessionIds()).toEqual(["alpha-1"]);
  });

  it("creates a session with a given id only with --new, and --new refuses an id in use", async () => {
    const first = await newSession("flaky-tests");
    expect(first).toMatchObject({ session_id: "flaky-tests", turn_index: 1, status: "completed" });

    const again = await runCli(["--db", lab.db, "run", "--session", "flaky-tests", "--new", "hi"]);
    expect(again.status).toBe(1);
    expect(stderrLines(again)).toEqual([
      "agent-lab: session flaky-tests already exists; drop --new to continue it",
    ]);

    const chat = await runCli(
      ["--db", lab.db, "chat", "--approve", "none", "--session", "chat-1", "--new"],
      {},
      "hello\n",
    );
    expect(chat.status, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("(session chat-1 created)");
    expect(sessionIds()).toEqual(["chat-1", "flaky-tests"]);
  });

  it("continues the one session a unique prefix names, in run and chat", async () => {
    const { session_id } = await runCliJson<TurnReport>(["--db", lab.db, "run", "hello"]);
    const prefix = session_id.slice(0, 6);
    const second = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--session",
      prefix,
      "and again",
    ]);
    expect(second).toMatchObject({ session_id, turn_index: 2 });

    const chat = await runCli(
      ["--db", lab.db, "chat", "--approve", "none", "--session", prefix],
      {},
      "third\n",
    );
    expect(chat.status, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(`Session ${session_id}`);
    expect(sessionIds()).toEqual([session_id]);
  });
});

describe("a session id given to the commands that read or remove a session", () => {
  it("takes a unique prefix in show, usage, call, export and delete", async () => {
    await newSession("report-2026-alpha", "search for agent lab");
    const prefix = "report-2026-a";
    const show = await runCli(["--db", lab.db, "show", prefix]);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toContain("Session report-2026-alpha:");

    const usage = await runCliJson<{ session: { call_count: number } }>([
      "--db",
      lab.db,
      "usage",
      prefix,
    ]);
    expect(usage.session.call_count).toBeGreaterThan(0);
    const usageText = await runCli(["--db", lab.db, "usage", prefix]);
    expect(usageText.stdout).toContain("Usage of session report-2026-alpha");

    const call = await runCli(["--db", lab.db, "call", prefix, "chat:1:1"]);
    expect(call.status, call.stderr).toBe(0);
    expect(call.stdout).toContain("of session report-2026-alpha");

    const exported = await runCli(["--db", lab.db, "export", prefix]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout).session.id).toBe("report-2026-alpha");

    const deleted = await runCli(["--db", lab.db, "delete", prefix, "--yes"]);
    expect(deleted.status, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/^Deleted session report-2026-alpha "/);
    expect(sessionIds()).toEqual([]);
  });

  it("refuses an ambiguous prefix, listing the candidates, and deletes nothing", async () => {
    await newSession("report-2026-alpha");
    await newSession("report-2026-beta");
    await newSession("other");
    for (const command of ["show", "usage", "export", "delete", "call", "run"]) {
      const args =
        command === "run"
          ? ["run", "--session", "report-2026", "hi"]
          : command === "call"
            ? ["call", "report-2026", "chat:1:1"]
            : [command, "report-2026", ...(command === "delete" ? ["--yes"] : [])];
      const result = await runCli(["--db", lab.db, ...args]);
      expect(result.status, command).toBe(1);
      expect(result.stdout, command).toBe("");
      expect(stderrLines(result), command).toEqual([
        'agent-lab: session id prefix report-2026 is ambiguous: it starts report-2026-alpha "hello", report-2026-beta "hello"; give more of the id',
      ]);
    }
    expect(sessionIds()).toEqual(["other", "report-2026-alpha", "report-2026-beta"]);
  });

  it("does not guess from fewer than 4 characters, and matches glob characters literally", async () => {
    await newSession("abcdef");
    await newSession("a*c?[x]-1");
    const short = await runCli(["--db", lab.db, "show", "abc"]);
    expect(short.status).toBe(1);
    expect(stderrLines(short)).toEqual([
      "agent-lab: session not found: abc (no id is or starts with it; agent-lab sessions lists them)",
    ]);
    // As a glob, "a*c?" would match "abcdef" too.
    const literal = await runCli(["--db", lab.db, "show", "a*c?"]);
    expect(literal.status, literal.stderr).toBe(0);
    expect(literal.stdout).toContain("Session a*c?[x]-1:");
    const star = await runCli(["--db", lab.db, "show", "ab*d"]);
    expect(stderrLines(star)).toEqual([
      "agent-lab: session not found: ab*d (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });

  it("names the id when the database does not exist, and does not create it", async () => {
    const result = await runCli(["--db", lab.db, "show", "abcd"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual(["agent-lab: session not found: abcd"]);
    expect(existsSync(lab.db)).toBe(false);
  });
});

describe("run and chat --help", () => {
  it("says the event model follows --model, as it does", async () => {
    for (const command of ["run", "chat"]) {
      const help = await runCli([command, "--help"]);
      expect(help.status).toBe(0);
      const text = help.stdout.replace(/\s+/g, " ");
      expect(text).toContain(
        "--event-model <spec> the event agent's model (default: the chat agent's, as --model sets it, or the --config file's event_agent)",
      );
      expect(text).toContain("--new create the session --session names");
    }
    const report = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--model",
      "sim:alt",
      "hi",
    ]);
    const shown = await runCliJson<{ session: { config: Record<string, unknown> } }>([
      "--db",
      lab.db,
      "show",
      report.session_id,
    ]);
    expect(shown.session.config).toMatchObject({
      chat_agent: { model: "sim:alt" },
      event_agent: { model: "sim:alt" },
    });
  });
});
