import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, runCliJson, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const lab = freshLab();

describe("agent-lab run when the database refuses mid-turn", () => {
  it("--json still prints the report, failed with the database's reason; the next run goes on", async () => {
    const setup = new SqliteSessionStore(lab.db);
    setup.createSession({ title: "s", session_id: "s", config: {} });
    setup.close();
    const connection = new Database(lab.db);
    connection.exec(`
      CREATE TRIGGER refuse_answers BEFORE INSERT ON messages WHEN NEW.role = 'assistant'
      BEGIN SELECT RAISE(ABORT, 'no space left on device'); END`);

    const result = await runCli([
      "--db",
      lab.db,
      "run",
      "--session",
      "s",
      "--json",
      "search for x",
    ]);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as TurnReport;
    expect(report).toMatchObject({ session_id: "s", turn_index: 1, status: "failed" });
    expect(report.error).toEqual({
      code: "storage_failed",
      message:
        "the database refused the write: no space left on device (SQLITE_CONSTRAINT_TRIGGER)",
    });
    expect(stderrLines(result).at(-1)).toContain("no space left on device");

    connection.exec("DROP TRIGGER refuse_answers");
    connection.close();
    const next = await runCliJson<TurnReport>(["--db", lab.db, "run", "--session", "s", "hello"]);
    expect(next).toMatchObject({ turn_index: 2, status: "completed" });
  });
});

describe("agent-lab run when the database refuses the failed turn's end too", () => {
  it("waits for the database to take it before it exits, so the turn is stored failed, not left running", async () => {
    const setup = new SqliteSessionStore(lab.db);
    setup.createSession({ title: "s", session_id: "s", config: {} });
    setup.close();
    const connection = new Database(lab.db);
    connection.exec(`
      CREATE TRIGGER refuse_answers BEFORE INSERT ON messages WHEN NEW.role = 'assistant'
      BEGIN SELECT RAISE(ABORT, 'no space left on device'); END;
      CREATE TRIGGER refuse_ends BEFORE UPDATE ON turns WHEN NEW.status = 'failed'
      BEGIN SELECT RAISE(ABORT, 'no space left on device'); END`);
    // Space comes back two seconds in, while the command waits.
    const freed = setTimeout(() => {
      connection.exec("DROP TRIGGER refuse_answers; DROP TRIGGER refuse_ends");
    }, 2_000);
    try {
      const result = await runCli(["--db", lab.db, "run", "--session", "s", "search for x"]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("the database has not taken a failed turn's end yet");
      expect(result.stderr).not.toContain("the database did not take it");
    } finally {
      clearTimeout(freed);
      connection.close();
    }
    const after = new SqliteSessionStore(lab.db);
    try {
      expect(after.listTurns("s").map((turn) => turn.status)).toEqual(["failed"]);
    } finally {
      after.close();
    }
  });
});

describe("agent-lab with an in-memory database", () => {
  it("run says that nothing is kept", async () => {
    const result = await runCli(["--db", ":memory:", "run", "hello"]);
    expect(result.status).toBe(0);
    expect(stderrLines(result)).toContain(
      'agent-lab: note: the database ":memory:" is in memory: nothing is kept once this command ends',
    );
  });
});
