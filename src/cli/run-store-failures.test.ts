import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, runCliJson, startCli, stderrLines } from "./test-fixtures.js";
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
    // Space comes back once the command says it waits for it. (Two seconds after the start, as
    // before, came too soon for a command that took that long to start on a loaded machine: the
    // turn then completed.)
    const waiting = "the database has not taken a failed turn's end yet";
    let freed = false;
    try {
      const running = startCli(["--db", lab.db, "run", "--session", "s", "search for x"]);
      let said = "";
      running.child.stderr?.on("data", (text: string) => {
        said += text;
        if (freed || !said.includes(waiting)) return;
        freed = true;
        connection.exec("DROP TRIGGER refuse_answers; DROP TRIGGER refuse_ends");
      });
      const result = await running.result;
      expect(freed).toBe(true);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(waiting);
      expect(result.stderr).not.toContain("the database did not take it");
    } finally {
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
