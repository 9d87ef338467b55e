import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { MessageRecord, SessionListItem } from "../domain/records.js";
import { SESSION_EXPORT_VERSION, type SessionExport } from "../domain/session-export.js";
import type { UsageSummary } from "../domain/usage.js";
import { freshLab, runCli, runCliJson, seededTemplate, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const MESSAGE = "search for agent lab and file a ticket about flaky tests";

const lab = freshLab();
let sessionId: string;

/** The seeded lab: a session of two turns with tool calls, made once through the CLI. */
const seeded = seededTemplate(async (db) => {
  const first = await runCliJson<TurnReport>([
    "--db",
    db,
    "run",
    "--approve",
    "all",
    "--title",
    "Flaky",
    MESSAGE,
  ]);
  await runCliJson([
    "--db",
    db,
    "run",
    "--approve",
    "all",
    "--session",
    first.session_id,
    "file a ticket about slow builds",
  ]);
  return first.session_id;
});

beforeEach(async () => {
  sessionId = await seeded(lab.db);
});
const path = (name: string) => join(lab.folder, name);

async function exported(): Promise<SessionExport> {
  const result = await runCli(["--db", lab.db, "export", sessionId]);
  expect(result.status).toBe(0);
  expect(result.stderr).toBe("");
  return JSON.parse(result.stdout) as SessionExport;
}

/** A session as `show --json` and `usage --json` print it, minus what a copy renumbers. */
async function comparable(database: string, id: string) {
  const shown = await runCliJson<{ messages: MessageRecord[] }>(["--db", database, "show", id]);
  const usage = await runCliJson<UsageSummary>(["--db", database, "usage", id]);
  return {
    messages: shown.messages.map(({ id: _id, session_id: _session, ...message }) => message),
    usage: { ...usage, calls: usage.calls.map(({ id: _id, ...call }) => call) },
  };
}

describe("agent-lab export and import", () => {
  it("round-trips a session under a new id with the same messages and usage", async () => {
    const document = await exported();
    expect(document).toMatchObject({
      format: "agent-lab.session",
      version: SESSION_EXPORT_VERSION,
      exported_at: expect.any(String),
      session: { id: sessionId, title: "Flaky" },
    });
    expect(document.turns.map((turn) => turn.status)).toEqual(["completed", "completed"]);
    const file = path("flaky.json");
    writeFileSync(file, JSON.stringify(document));

    const imported = await runCli(["--db", lab.db, "import", file, "--session-id", "flaky-copy"]);
    expect(imported.stderr).toBe("");
    expect(imported.status).toBe(0);
    expect(imported.stdout).toBe("flaky-copy\n");
    expect(await comparable(lab.db, "flaky-copy")).toEqual(await comparable(lab.db, sessionId));
    const { sessions } = await runCliJson<{ sessions: SessionListItem[] }>([
      "--db",
      lab.db,
      "sessions",
    ]);
    expect(sessions.map((session) => [session.id, session.turn_count]).sort()).toEqual(
      [
        ["flaky-copy", 2],
        [sessionId, 2],
      ].sort(),
    );
    // The copy is a session like any other: it takes another turn.
    const third = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--session",
      "flaky-copy",
      "hello",
    ]);
    expect(third.turn_index).toBe(3);
  });

  it("imports from stdin into another lab under the document's own id (--json)", async () => {
    const other = path("other.sqlite3");
    const text = (await runCli(["--db", lab.db, "export", sessionId])).stdout;
    const result = await runCli(["--db", other, "import", "-", "--json"], {}, text);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ session_id: sessionId });
    expect(await comparable(other, sessionId)).toEqual(await comparable(lab.db, sessionId));
  });

  it("writes to --out, and refuses to overwrite the file unless --force", async () => {
    const out = path("out.json");
    const written = await runCli(["--db", lab.db, "export", sessionId, "--out", out]);
    expect(written.status).toBe(0);
    expect(written.stdout).toBe(`Exported session ${sessionId} (2 turns, 9 messages) to ${out}\n`);
    const document = JSON.parse(readFileSync(out, "utf8")) as SessionExport;
    const { exported_at: _at, ...rest } = document;
    const { exported_at: _again, ...fresh } = await exported();
    expect(rest).toEqual(fresh);

    writeFileSync(out, "keep me");
    const refused = await runCli(["--db", lab.db, "export", sessionId, "--out", out]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(stderrLines(refused)).toEqual([
      `agent-lab: ${out} already exists; pass --force to overwrite it`,
    ]);
    expect(readFileSync(out, "utf8")).toBe("keep me");

    const forced = await runCli(["--db", lab.db, "export", sessionId, "--out", out, "--force"]);
    expect(forced.status).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ session: { id: sessionId } });
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", lab.db, "export", "no-such-session"]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual([
      "agent-lab: session not found: no-such-session (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });
});

describe("agent-lab import: refusals", () => {
  async function refusal(name: string, content: string, database = lab.db): Promise<string[]> {
    const file = path(name);
    writeFileSync(file, content);
    const result = await runCli(["--db", database, "import", file]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    const lines = stderrLines(result);
    expect(lines).toHaveLength(1);
    return lines.map((line) => line.replace(file, "FILE"));
  }

  it("names the file when it is not JSON", async () => {
    const fresh = path("fresh.sqlite3");
    expect(await refusal("broken.json", "{ not json", fresh)).toEqual([
      expect.stringMatching(/^agent-lab: FILE: not valid JSON \(.+\)$/),
    ]);
    expect(existsSync(fresh)).toBe(false);
  });

  it("names the format field of a file that is not an export", async () => {
    expect(await refusal("package.json", JSON.stringify({ name: "x", version: "1.0.0" }))).toEqual([
      'agent-lab: FILE: format: expected "agent-lab.session", found missing; not a session written by agent-lab export',
    ]);
    const document = { ...(await exported()), format: "agent-lab.transcript" };
    expect(await refusal("wrong.json", JSON.stringify(document))).toEqual([
      'agent-lab: FILE: format: expected "agent-lab.session", found "agent-lab.transcript"; not a session written by agent-lab export',
    ]);
  });

  it("names the invalid field of a damaged document, storing nothing", async () => {
    const fresh = path("fresh.sqlite3");
    const document = await exported();
    const damaged = {
      ...document,
      messages: document.messages.map((message, index) =>
        index === 1 ? { ...message, role: "robot" } : message,
      ),
    };
    expect(await refusal("damaged.json", JSON.stringify(damaged), fresh)).toEqual([
      expect.stringMatching(/^agent-lab: FILE: messages\.1\.role: Invalid option/),
    ]);
    expect(existsSync(fresh)).toBe(false);
    const newer = { ...document, version: SESSION_EXPORT_VERSION + 1 };
    expect(await refusal("newer.json", JSON.stringify(newer))).toEqual([
      `agent-lab: FILE: version: ${SESSION_EXPORT_VERSION + 1} was written by a newer agent-lab (this one reads versions up to ${SESSION_EXPORT_VERSION}); upgrade agent-lab to import it`,
    ]);
  });

  it("refuses an id that is taken, changing nothing", async () => {
    const document = await exported();
    expect(await refusal("same.json", JSON.stringify(document))).toEqual([
      `agent-lab: session already exists: ${sessionId}; pass --session-id to import FILE under another id`,
    ]);
    const { sessions } = await runCliJson<{ sessions: SessionListItem[] }>([
      "--db",
      lab.db,
      "sessions",
    ]);
    expect(sessions.map((session) => session.id)).toEqual([sessionId]);
  });

  it("says so when the file does not exist", async () => {
    const missing = path("missing.json");
    const result = await runCli(["--db", lab.db, "import", missing]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([`agent-lab: ${missing}: no such file or folder`]);
  });
});

describe("agent-lab delete", () => {
  it("deletes with --yes, after which the session is gone", async () => {
    const result = await runCli(["--db", lab.db, "delete", sessionId, "--yes"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`Deleted session ${sessionId} "Flaky" (2 turns)\n`);
    const shown = await runCli(["--db", lab.db, "show", sessionId]);
    expect(shown.status).toBe(1);
    expect(stderrLines(shown)).toEqual([
      `agent-lab: session not found: ${sessionId} (no id is or starts with it; agent-lab sessions lists them)`,
    ]);
    expect(await runCliJson(["--db", lab.db, "sessions"])).toMatchObject({ sessions: [] });
  });

  it("refuses without --yes when stdin is not a terminal, deleting nothing", async () => {
    const result = await runCli(["--db", lab.db, "delete", sessionId], {}, "y\n");
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual([
      `agent-lab: not deleting session ${sessionId} "Flaky" (2 turns) without confirmation: stdin is not a terminal to ask on; pass --yes`,
    ]);
    expect((await runCli(["--db", lab.db, "show", sessionId])).status).toBe(0);
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", lab.db, "delete", "no-such-session", "--yes"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      "agent-lab: session not found: no-such-session (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });
});
