import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/postgres-database.js";
import type { SessionListItem } from "../domain/records.js";
import type { UsageSummary } from "../domain/usage.js";
import { openSessionStore } from "../store/open-store.js";
import type { CopyOutcome } from "./commands/db-copy.js";
import {
  type CliResult,
  freshLab,
  runCli,
  runCliJson,
  seededTemplate,
  startCli,
} from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const lab = freshLab();
const databases: TestDatabase[] = [];
afterEach(async () => {
  for (const database of databases.splice(0)) await database.drop();
});

async function postgres(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

const passwordOf = (url: string) => decodeURIComponent(new URL(url).password);

function expectNoSecret(result: CliResult, url: string): void {
  const password = passwordOf(url);
  expect(password.length).toBeGreaterThan(0);
  expect(result.stdout).not.toContain(password);
  expect(result.stderr).not.toContain(password);
}

/** Two sessions with tool calls and captured payloads (the simulated model is on loopback). */
async function seedThroughCli(db: string): Promise<string[]> {
  const first = await runCliJson<TurnReport>([
    "--db",
    db,
    "run",
    "--approve",
    "all",
    "--title",
    "Flaky",
    "search for agent lab and file a ticket about flaky tests",
  ]);
  await runCliJson(["--db", db, "run", "--session", first.session_id, "and now search vitest"]);
  const second = await runCliJson<TurnReport>([
    "--db",
    db,
    "run",
    "--mode",
    "chat_agent_tools",
    "search for vitest",
  ]);
  return [first.session_id, second.session_id];
}

const seededCopy = seededTemplate(seedThroughCli);

/** `seedThroughCli` for a PostgreSQL URL; for a SQLite file, a copy of the file's seeded lab. */
async function seed(db: string): Promise<string[]> {
  return db.startsWith("postgres") ? seedThroughCli(db) : seededCopy(db);
}

/** `seed`, then 50 copies of its first session (`bulk-0`…): 52 sessions. Its first session's id. */
async function seedBulk(db: string): Promise<string> {
  const [original] = await seed(db);
  const source = await openSessionStore(db);
  try {
    const document = await source.exportSession(original as string);
    for (let n = 0; n < 50; n++) {
      await source.importSession(document, { session_id: `bulk-${n}` });
    }
  } finally {
    await source.close();
  }
  return original as string;
}

/**
 * A session as the store reads it back (what `show --json`, `usage --json` and `call` print),
 * minus the ids a database numbers: read in-process, as a CLI process a read cost seconds here.
 */
async function comparable(db: string, id: string) {
  const store = await openSessionStore(db);
  try {
    const usage = await store.usageSummary(id);
    const call = await store.getCallPayload(id, "chat:1:1");
    // Every seeded session captured its first call: a payload lost on both sides is no match.
    expect(
      call,
      `the payload of ${id}'s first call in ${db.replace(/:[^:@/]*@/, ":***@")}`,
    ).not.toBeNull();
    return {
      session: await store.getSession(id),
      messages: (await store.listMessages(id)).map(({ id: _, ...message }) => message),
      audit: (await store.listAuditLogs(id)).map(({ id: _, ...row }) => row),
      turns: await store.listTurns(id),
      usage: { ...usage, calls: usage.calls.map(({ id: _, ...rest }) => rest) },
      call: { request: call?.request_body, response: call?.response_body },
    };
  } finally {
    await store.close();
  }
}

const copyArgs = (from: string, to: string, ...more: string[]) => [
  "db",
  "copy",
  "--from",
  from,
  "--to",
  to,
  ...more,
];

async function copy(from: string, to: string, ...more: string[]): Promise<CliResult> {
  return runCli(copyArgs(from, to, ...more));
}

describe("agent-lab --db postgres://…", { timeout: 180_000 }, () => {
  it("runs, lists and shows sessions in PostgreSQL, from --db or $AGENT_LAB_DB, never printing the password", async () => {
    const { url } = await postgres();
    const empty = await runCli(["--db", url, "sessions"]);
    expect(empty.status).toBe(0);
    expect(empty.stdout).toContain("No sessions yet in postgres://agentlab:***@127.0.0.1:");
    expectNoSecret(empty, url);
    // A read of a database the lab never wrote to leaves it as it was: the next read is empty too.
    expect((await runCliJson<{ sessions: unknown[] }>(["--db", url, "sessions"])).sessions).toEqual(
      [],
    );
    const ids = await seed(url);
    const listed = await runCliJson<{ sessions: SessionListItem[] }>(["sessions"], {
      AGENT_LAB_DB: url,
    });
    expect(listed.sessions.map((session) => session.id).sort()).toEqual([...ids].sort());
    const prefix = (ids[0] as string).slice(0, 8);
    const shown = await runCli(["show", prefix], { AGENT_LAB_DB: url });
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain(`Session ${ids[0]}: Flaky`);
  });

  it("a URL without a password, on a server that asks for one, is refused at once, saying where the password goes", async () => {
    const withPassword = new URL((await postgres()).url);
    withPassword.password = "";
    const url = withPassword.toString();
    const noPassword = { PGPASSWORD: undefined, PGPASSFILE: "/nonexistent/agent-lab-pgpass" };
    for (const command of [["run", "hi"], ["sessions"]]) {
      const started = performance.now();
      const refused = await runCli(["--db", url, ...command], noPassword);
      expect(refused.status, command.join(" ")).toBe(1);
      expect(refused.stderr).toContain("the server asks for a password and none was given");
      expect(refused.stderr).toMatch(/cannot open database \w+ on 127\.0\.0\.1:\d+/);
      // The refused connection is closed: the command does not wait for the server's own
      // authentication timeout (60 s) to exit.
      expect(performance.now() - started, command.join(" ")).toBeLessThan(20_000);
    }
  });

  it("serves the web UI and API from a PostgreSQL database named by $AGENT_LAB_DB", async () => {
    const { url } = await postgres();
    const [id] = await seed(url);
    const serve = startCli(["serve", "--port", "0", "--no-token"], { AGENT_LAB_DB: url });
    try {
      const banner = await serve.stdoutContains("No token");
      expect(banner).toMatch(/Database postgres:\/\/agentlab:\*\*\*@127\.0\.0\.1:\d+\/\w+\n/);
      const address = /running at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(banner)?.[1];
      const response = await fetch(`${address}api/sessions/${id}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { session: { id: string } }).session.id).toBe(id);
    } finally {
      serve.child.kill("SIGTERM");
    }
    const ended = await serve.result;
    expect(ended.status).toBe(0);
    expectNoSecret(ended, url);
  });

  it("refuses a wrong password or a closed port with one line naming the database without the password", async () => {
    const { url } = await postgres();
    const wrong = new URL(url);
    wrong.password = "not-the-password-x9";
    const refused = await runCli(["--db", wrong.toString(), "run", "hello"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^agent-lab: cannot open .*password authentication failed.*\n$/);
    expect(refused.stderr).toContain(`127.0.0.1:${wrong.port}`);
    expect(refused.stderr).toContain(wrong.pathname.slice(1));
    expectNoSecret(refused, wrong.toString());
    expectNoSecret(refused, url);

    const closed = new URL(url);
    closed.port = "1";
    const unreachable = await runCli(["--db", closed.toString(), "sessions"]);
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr.trim().split("\n")).toHaveLength(1);
    expect(unreachable.stderr).toMatch(/^agent-lab: cannot open .*127\.0\.0\.1:1\b/);
    expect(unreachable.stderr).toContain("ECONNREFUSED");
    expectNoSecret(unreachable, url);
  });
});

// Dozens of CLI processes a test, each a second or two on a shared machine.
describe("agent-lab db copy", { timeout: 300_000 }, () => {
  it("copies SQLite → PostgreSQL → SQLite with every record and payload, verified by counts and totals", async () => {
    const ids = await seed(lab.db);
    const { url } = await postgres();
    const there = await copy(lab.db, url);
    expect(there.status, there.stderr).toBe(0);
    expect(there.stdout).toContain(`copied 2 sessions from ${lab.db} to postgres://agentlab:***@`);
    expect(there.stdout).toContain("verified:");
    expectNoSecret(there, url);
    const back = join(lab.folder, "back.sqlite3");
    const outcome = await runCliJson<CopyOutcome>(["db", "copy", "--from", url, "--to", back]);
    expect(outcome).toMatchObject({ listed: 2, copied: 2, present: 0, conflicts: [] });
    expect(outcome.target).toStrictEqual(outcome.source);
    expect(outcome.source).toMatchObject({ sessions: 2, turns: 3 });
    expect(outcome.source.usage_rows).toBeGreaterThan(3);
    expect(outcome.source.payloads).toBeGreaterThan(0);
    expect(outcome.source.total_tokens).toBeGreaterThan(0);
    for (const id of ids) {
      const original = await comparable(lab.db, id);
      // Something to compare: the calls, their payload and the audit trail are there.
      expect(original.call.request?.length).toBeGreaterThan(0);
      expect(original.usage.calls.length).toBeGreaterThan(1);
      expect(original.audit.length).toBeGreaterThan(5);
      expect(await comparable(url, id)).toStrictEqual(original);
      expect(await comparable(back, id)).toStrictEqual(original);
    }
  });

  it("copies only what is missing when run again, and says what it would do with --dry-run", async () => {
    const ids = await seed(lab.db);
    const { url } = await postgres();
    expect((await copy(lab.db, url)).status).toBe(0);
    // An interrupted copy leaves whole sessions: one missing stands for the rest not yet copied.
    const removed = await runCli(["--db", url, "delete", ids[1] as string, "--yes"]);
    expect(removed.status).toBe(0);
    const dry = await runCliJson<CopyOutcome>(copyArgs(lab.db, url, "--dry-run"));
    expect(dry).toMatchObject({ copied: 1, present: 1 });
    const listed = await runCliJson<{ sessions: SessionListItem[] }>(["--db", url, "sessions"]);
    expect(listed.sessions.map((session) => session.id)).toEqual([ids[0]]);

    const again = await runCliJson<CopyOutcome>(["db", "copy", "--from", lab.db, "--to", url]);
    expect(again).toMatchObject({ listed: 2, copied: 1, present: 1, conflicts: [] });
    expect(again.target).toStrictEqual(again.source);
    const third = await runCliJson<CopyOutcome>(["db", "copy", "--from", lab.db, "--to", url]);
    expect(third).toMatchObject({ copied: 0, present: 2 });
    expect(await comparable(url, ids[1] as string)).toStrictEqual(
      await comparable(lab.db, ids[1] as string),
    );
    // A dry run into a database that does not exist creates nothing.
    const nowhere = join(lab.folder, "not-created.sqlite3");
    expect((await copy(lab.db, nowhere, "--dry-run")).status).toBe(0);
    expect((await runCli(["--db", nowhere, "sessions"])).stdout).toContain("No sessions yet");
  });

  it("copies a session holding U+0000, which PostgreSQL stores as U+FFFD, and finds it the same on the next run", async () => {
    const source = await openSessionStore(lab.db);
    try {
      await source.createSession({ title: "nul\u0000here", config: {} });
    } finally {
      await source.close();
    }
    const { url } = await postgres();
    const first = await runCliJson<CopyOutcome>(copyArgs(lab.db, url));
    expect(first).toMatchObject({ copied: 1, conflicts: [] });
    const again = await runCliJson<CopyOutcome>(copyArgs(lab.db, url));
    expect(again).toMatchObject({ copied: 0, present: 1, conflicts: [] });
    const listed = await runCliJson<{ sessions: SessionListItem[] }>(["--db", url, "sessions"]);
    expect(listed.sessions.map((session) => session.title)).toEqual(["nul\uFFFDhere"]);
  });

  it("copies a session whose turn is still marked running as interrupted, and finds it the same on the next run", async () => {
    await seed(lab.db);
    const source = await openSessionStore(lab.db);
    let running: string;
    try {
      // A turn whose process was killed mid-way (or that runs still) stays marked running.
      running = await source.createSession({ title: "cut short", config: {} });
      await source.startTurn(running, { turn_index: 1, user_message: "search for a" });
    } finally {
      await source.close();
    }
    const target = join(lab.folder, "copy.sqlite3");
    const first = await runCliJson<CopyOutcome>(copyArgs(lab.db, target));
    expect(first).toMatchObject({ copied: 3, conflicts: [] });
    expect(first.target).toStrictEqual(first.source);
    const copied = await openSessionStore(target);
    try {
      const turns = await copied.listTurns(running);
      expect(turns.map((turn) => turn.status)).toStrictEqual(["interrupted"]);
    } finally {
      await copied.close();
    }
    // The next run finds it there, the same as long as it runs in the source.
    const again = await runCliJson<CopyOutcome>(copyArgs(lab.db, target));
    expect(again).toMatchObject({ copied: 0, present: 3, conflicts: [] });
    // Finished in the source since: the copy is the past, said so by the turn.
    const later = await openSessionStore(lab.db);
    try {
      await later.completeTurn(running, { turn_index: 1, wall_time_ms: 5, status: "completed" });
    } finally {
      await later.close();
    }
    const stale = await copy(lab.db, target);
    expect(stale.status).toBe(1);
    expect(stale.stdout).toContain(
      `conflict: session ${running} is in the target with other records (turn 1: completed in the source, interrupted in the target)`,
    );
  });

  it("a turn running in the source and interrupted in the target must agree in all else", async () => {
    const source = await openSessionStore(lab.db);
    let running: string;
    try {
      running = await source.createSession({ title: "cut short", config: {} });
      await source.startTurn(running, { turn_index: 1, user_message: "search for a" });
    } finally {
      await source.close();
    }
    const target = join(lab.folder, "copy.sqlite3");
    expect(await runCliJson<CopyOutcome>(copyArgs(lab.db, target))).toMatchObject({
      copied: 1,
      conflicts: [],
    });
    // The target's copy of that turn changed by hand: the interruption does not excuse it.
    const db = new Database(target);
    try {
      db.prepare("UPDATE turns SET user_message = 'search for b' WHERE session_id = ?").run(
        running,
      );
    } finally {
      db.close();
    }
    const again = await copy(lab.db, target);
    expect(again.status).toBe(1);
    expect(again.stdout).toContain(
      `conflict: session ${running} is in the target with other records`,
    );
  });

  it("resumes a copy killed mid-way: progress on stderr, then the rest copied whole and verified", async () => {
    const original = await seedBulk(lab.db);
    const { url } = await postgres();
    // A progress line after every session: killed after the first, the copy is surely mid-way.
    const running = startCli(copyArgs(lab.db, url, "--progress-every", "0"));
    const progress = await new Promise<string>((resolve, reject) => {
      let stderr = "";
      running.child.stderr?.on("data", (text: string) => {
        stderr += text;
        const line = /db copy: (\d+) of 52 sessions[^\n]*\n/.exec(stderr);
        if (line !== null) resolve(line[0]);
      });
      running.result.then(
        (ended) => reject(new Error(`the copy ended before any progress: ${ended.stderr}`)),
        reject,
      );
    });
    running.child.kill("SIGKILL");
    const killed = await running.result;
    expect(killed.signal).toBe("SIGKILL");
    const done = Number(/db copy: (\d+) of/.exec(progress)?.[1]);
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(52);
    const target = await openSessionStore(url);
    const partial = (await target.listSessions()).length;
    await target.close();
    expect(partial).toBeGreaterThanOrEqual(done);
    expect(partial).toBeLessThan(52);

    const resumed = await runCliJson<CopyOutcome>(["db", "copy", "--from", lab.db, "--to", url]);
    expect(resumed).toMatchObject({ listed: 52, conflicts: [] });
    expect(resumed.present).toBe(partial);
    expect(resumed.copied).toBe(52 - partial);
    expect(resumed.target).toStrictEqual(resumed.source);
    expect(resumed.source.sessions).toBe(52);
    expect(resumed.source.payloads).toBeGreaterThan(0);
    expect(await comparable(url, original)).toStrictEqual(await comparable(lab.db, original));
  });

  it("stops on Ctrl-C between two sessions, says how far it got and how to go on, and goes on when run again", async () => {
    await seedBulk(lab.db);
    const copyPath = join(lab.folder, "copy.sqlite3");
    const running = startCli(copyArgs(lab.db, copyPath, "--progress-every", "0"));
    await new Promise<void>((resolve, reject) => {
      let stderr = "";
      running.child.stderr?.on("data", (text: string) => {
        stderr += text;
        if (/db copy: \d+ of 52 sessions/.test(stderr)) resolve();
      });
      running.result.then(
        (ended) => reject(new Error(`the copy ended before any progress: ${ended.stderr}`)),
        reject,
      );
    });
    running.child.kill("SIGINT");
    const stopped = await running.result;
    expect(stopped.status).toBe(130);
    const said =
      /db copy stopped by SIGINT after (\d+) of 52 sessions; those are whole: run the same command again to copy the rest\n$/.exec(
        stopped.stderr,
      );
    expect(said, stopped.stderr).not.toBeNull();
    const looked = Number(said?.[1]);
    expect(looked).toBeGreaterThan(0);
    expect(looked).toBeLessThan(52);
    const target = await openSessionStore(copyPath);
    const partial = (await target.listSessions()).length;
    await target.close();
    expect(partial).toBe(looked);

    const resumed = await runCliJson<CopyOutcome>([
      "db",
      "copy",
      "--from",
      lab.db,
      "--to",
      copyPath,
    ]);
    expect(resumed).toMatchObject({ listed: 52, present: partial, copied: 52 - partial });
    expect(resumed.target).toStrictEqual(resumed.source);
  });

  it("two copies into the same target at once both end well: what the other copied counts as already there", async () => {
    const source = await openSessionStore(lab.db);
    const ids: string[] = [];
    for (let index = 0; index < 60; index++) {
      ids.push(await source.createSession({ title: `session ${index}`, session_id: `s${index}` }));
    }
    await source.close();
    const { url } = await postgres();
    const both = await Promise.all([
      runCli([...copyArgs(lab.db, url), "--json"]),
      runCli([...copyArgs(lab.db, url), "--json"]),
    ]);
    for (const result of both) expect([result.status, result.stderr]).toEqual([0, ""]);
    const outcomes = both.map((result) => JSON.parse(result.stdout) as CopyOutcome);
    for (const outcome of outcomes) {
      expect(outcome.conflicts).toEqual([]);
      expect(outcome.copied + outcome.present).toBe(60);
    }
    // Every session copied once, by one or the other.
    expect((outcomes[0]?.copied ?? 0) + (outcomes[1]?.copied ?? 0)).toBe(60);
    const target = await openSessionStore(url);
    try {
      expect((await target.listSessions()).map((session) => session.id).sort()).toEqual(
        [...ids].sort(),
      );
    } finally {
      await target.close();
    }
  });

  it("leaves a session the target holds with other records alone, copies the rest and exits 1", async () => {
    const ids = await seed(lab.db);
    const { url } = await postgres();
    expect((await copy(lab.db, url)).status).toBe(0);
    // The target's copy of the first session moves on: another turn there.
    await runCliJson(["--db", url, "run", "--session", ids[0] as string, "one more"]);
    expect((await runCli(["--db", url, "delete", ids[1] as string, "--yes"])).status).toBe(0);
    const result = await copy(lab.db, url);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain("copied 1 session");
    expect(result.stdout).toContain(
      `conflict: session ${ids[0]} is in the target with other records (turns: 2 in the source, 3 in the target)`,
    );
    const turns = await runCliJson<UsageSummary>(["--db", url, "usage", ids[0] as string]);
    expect(turns.turns).toHaveLength(3);
  });

  it("a database that fails mid-copy is named by its side, without a password", async () => {
    await seed(lab.db);
    const { url } = await postgres();
    // The target refuses messages, as a full disk would: a real failed INSERT mid-copy.
    const target = (await openSessionStore(url)) as unknown as {
      pool: { query(sql: string): Promise<unknown> };
      close(): Promise<void>;
    };
    await target.pool.query(`
      CREATE FUNCTION refuse_messages() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'no space left for messages'; END $$;
      CREATE TRIGGER refuse_messages BEFORE INSERT ON messages
        FOR EACH ROW EXECUTE FUNCTION refuse_messages();`);
    await target.close();
    const result = await copy(lab.db, url);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^agent-lab: --to \(postgres:\/\/agentlab:\*\*\*@[^)]*\): the database refused the write: no space left for messages/,
    );
    expectNoSecret(result, url);
    // A server shutting down (57P01) is no refusal: the copy says what is whole and how to go on.
    const again = (await openSessionStore(url)) as unknown as typeof target;
    await again.pool.query(`
      CREATE OR REPLACE FUNCTION refuse_messages() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'terminating connection due to administrator command'
          USING ERRCODE = '57P01';
      END $$;`);
    await again.close();
    const away = await copy(lab.db, url);
    expect(away.status).toBe(1);
    expect(away.stderr).toMatch(
      /^agent-lab: --to \(postgres:\/\/agentlab:\*\*\*@[^)]*\): the database refused the write: terminating connection due to administrator command \(57P01\); the sessions copied so far are whole: run the same command again to copy the rest\n$/,
    );
  });

  it("takes back a session that reads back unlike the source, stops, and copies it once the target stores it faithfully", async () => {
    const ids = await seed(lab.db);
    const { url } = await postgres();
    // A target that changes what it is given (a trigger someone left there): every write
    // succeeds, only the read-back can tell.
    const target = (await openSessionStore(url)) as unknown as {
      pool: { query(sql: string): Promise<{ rows: Record<string, unknown>[] }> };
      close(): Promise<void>;
    };
    const rowsLeft = async () =>
      (
        await target.pool.query(`SELECT
          (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM turns) AS turns,
          (SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM usage_stats) AS usage,
          (SELECT count(*) FROM audit_logs) AS audit, (SELECT count(*) FROM call_payloads) AS payloads`)
      ).rows[0];
    try {
      await target.pool.query(`
        CREATE FUNCTION edit_messages() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.content := NEW.content || ' (edited)'; RETURN NEW; END $$;
        CREATE TRIGGER edit_messages BEFORE INSERT ON messages
          FOR EACH ROW EXECUTE FUNCTION edit_messages();`);
      const result = await copy(lab.db, url);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(
        /^agent-lab: session \S+ reads back from the target unlike the source \(.*\); it was removed from the target again, and the copy stopped\n$/,
      );
      expectNoSecret(result, url);
      // Nothing of it is left behind, and the copy went no further.
      expect(await rowsLeft()).toEqual({
        sessions: 0,
        turns: 0,
        messages: 0,
        usage: 0,
        audit: 0,
        payloads: 0,
      });
      await target.pool.query("DROP TRIGGER edit_messages ON messages");
    } finally {
      await target.close();
    }
    const again = await runCliJson<CopyOutcome>(copyArgs(lab.db, url));
    expect(again).toMatchObject({ copied: 2, present: 0, conflicts: [] });
    for (const id of ids) {
      expect(await comparable(url, id)).toStrictEqual(await comparable(lab.db, id));
    }
  });

  it("names a bad source or target clearly, without a password", async () => {
    await seed(lab.db);
    const { url } = await postgres();
    const missing = await copy(join(lab.folder, "nope.sqlite3"), url);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(
      `agent-lab: --from: no such database file: ${join(lab.folder, "nope.sqlite3")}\n`,
    );
    const emptySource = await copy(url, join(lab.folder, "out.sqlite3"));
    expect(emptySource.stderr).toMatch(
      /^agent-lab: --from: postgres:\/\/agentlab:\*\*\*@.* holds no agent-lab tables: nothing to copy\n$/,
    );
    expectNoSecret(emptySource, url);
    const memory = await copy(lab.db, ":memory:");
    expect(memory.status).toBe(1);
    expect(memory.stderr).toContain("--to: an in-memory database keeps nothing");
    const uri = await copy(lab.db, "file::memory:");
    expect(uri.status).toBe(1);
    expect(uri.stderr).toContain(
      '--to: "file::memory:" is a SQLite URI, which agent-lab would take for a file of that name',
    );
    const mysql = await copy("mysql://lab:pw-9@db/lab", url);
    expect(mysql.status).toBe(1);
    expect(mysql.stderr).toContain('--from: agent-lab cannot open "mysql://lab:***@db/lab"');
    expect(mysql.stderr).not.toContain("pw-9");
    const same = await copy(lab.db, lab.db);
    expect(same.stderr).toContain("--from and --to name the same database");
    const badEvery = await copy(lab.db, url, "--progress-every", "soon");
    expect(badEvery.status).toBe(1);
    expect(badEvery.stderr).toContain("--progress-every");
    expect(badEvery.stderr).toContain("must be a number of seconds");
    const noFolder = await copy(lab.db, join(lab.folder, "no", "such", "lab.sqlite3"));
    expect(noFolder.status).toBe(1);
    expect(noFolder.stderr).toMatch(/^agent-lab: --to: cannot open .*no\/such\/lab\.sqlite3.*\n$/);
    const wrong = new URL(url);
    wrong.password = "wrong-password-z7";
    const denied = await copy(lab.db, wrong.toString());
    expect(denied.status).toBe(1);
    expect(denied.stderr).toMatch(
      /^agent-lab: --to: cannot open .*password authentication failed.*\n$/,
    );
    expectNoSecret(denied, wrong.toString());
    const notUrl = await copy(lab.db, "postgres://agentlab:pw-in-bad-url@127.0.0.1:notaport/x");
    expect(notUrl.status).toBe(1);
    expect(notUrl.stderr).toMatch(/^agent-lab: --to: cannot open .*\n$/);
    expect(notUrl.stderr).not.toContain("pw-in-bad-url");
  });
});
