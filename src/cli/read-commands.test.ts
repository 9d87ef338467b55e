import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { runCli, runCliJson, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

let folder: ReturnType<typeof temporaryDirectory>;
let db: string;
let report: TurnReport;

beforeAll(async () => {
  folder = temporaryDirectory();
  db = join(folder.path, "lab.sqlite3");
  report = await runCliJson<TurnReport>([
    "--db",
    db,
    "run",
    "--approve",
    "all",
    "--title",
    "Flaky tests",
    "search for agent lab and file a ticket about flaky tests",
  ]);
});
afterAll(() => folder.remove());

function withStore<Value>(use: (store: SqliteSessionStore) => Value): Value {
  const store = new SqliteSessionStore(db);
  try {
    return use(store);
  } finally {
    store.close();
  }
}

describe("agent-lab sessions", () => {
  it("prints exactly the listSessions records with --json", async () => {
    const sessions = await runCliJson(["--db", db, "sessions"]);
    expect(sessions).toEqual(withStore((store) => store.listSessions()));
    expect(sessions).toEqual([
      {
        id: report.session_id,
        title: "Flaky tests",
        created_at: expect.any(String),
        updated_at: expect.any(String),
        turn_count: 1,
        total_tokens: report.usage.total_tokens,
      },
    ]);
  });

  it("prints a table for people", async () => {
    const result = await runCli(["--db", db, "sessions"]);
    expect(result.status).toBe(0);
    const [header, row] = result.stdout.split("\n");
    expect(header).toMatch(/^ID\s+TITLE\s+TURNS\s+TOKENS\s+UPDATED \(UTC\)$/);
    expect(row).toContain(report.session_id);
    expect(row).toContain("Flaky tests");
  });

  it("reads a missing database as an empty lab without creating it", async () => {
    const missing = join(folder.path, "missing.sqlite3");
    expect(await runCliJson(["--db", missing, "sessions"])).toEqual([]);
    const result = await runCli(["--db", missing, "sessions"]);
    expect(result.stdout).toMatch(/^No sessions yet in /);
    expect(existsSync(missing)).toBe(false);
  });
});

describe("agent-lab usage", () => {
  it("prints exactly the store's usageSummary record with --json", async () => {
    const summary = await runCliJson(["--db", db, "usage", report.session_id]);
    expect(summary).toEqual(withStore((store) => store.usageSummary(report.session_id)));
  });

  it("prints a per-turn table with the session's totals", async () => {
    const result = await runCli(["--db", db, "usage", report.session_id]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`Usage of session ${report.session_id}`);
    expect(lines.find((line) => line.startsWith("TURN"))).toMatch(
      /^TURN\s+CALLS\s+TOOLS\s+FALLBACKS\s+PROMPT\s+COMPLETION\s+CACHED\s+TOTAL\s+TTFT\s+ELAPSED\s+WALL$/,
    );
    expect(lines.find((line) => line.startsWith("1 "))).toMatch(/^1\s+4\s+2\s+0\s/);
    expect(lines.find((line) => line.startsWith("total"))).toMatch(/^total\s+4\s+2\s+0\s/);
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", db, "usage", "no-such-session"]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual(["agent-lab: session not found: no-such-session"]);
  });
});

describe("agent-lab show", () => {
  it("prints { session, messages, audit } with --json", async () => {
    const shown = await runCliJson<Record<string, unknown>>([
      "--db",
      db,
      "show",
      report.session_id,
    ]);
    expect(Object.keys(shown)).toEqual(["session", "messages", "audit"]);
    const expected = withStore((store) => ({
      session: store.getSession(report.session_id),
      messages: store.listMessages(report.session_id),
      audit: store.listAuditLogs(report.session_id),
    }));
    expect(shown).toEqual(expected);
    expect(expected.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
  });

  it("prints a readable transcript", async () => {
    const result = await runCli(["--db", db, "show", report.session_id]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`Session ${report.session_id}: Flaky tests`);
    expect(lines[1]).toBe("mode dual_agent · chat agent sim · event agent sim");
    expect(lines).toContain("user: search for agent lab and file a ticket about flaky tests");
    expect(lines).toContain('  → mock_search {"query":"agent lab"}');
    expect(lines.some((line) => line.startsWith("── turn 1 · completed · wall "))).toBe(true);
    expect(result.stdout).toContain("assistant: Here is what the tools returned:");
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", db, "show", "no-such-session"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual(["agent-lab: session not found: no-such-session"]);
  });
});

describe("help", () => {
  it.each(["run", "sessions", "usage", "show"])(
    "agent-lab %s --help shows an example",
    async (name) => {
      const result = await runCli([name, "--help"]);
      expect(result.status).toBe(0);
      expect(result.stdout).toContain(`Usage: agent-lab ${name}`);
      expect(result.stdout).toMatch(new RegExp(`Examples:\\n {2}\\$ agent-lab ${name}`));
    },
  );
});
