import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createLabProviders } from "../composition/lab-providers.js";
import { REDACTED } from "../domain/secrets.js";
import { LabSessionConfig } from "../domain/session-config.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { runTurn } from "../runtime/run-turn.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { HandWrittenLoop } from "./hand-written-loop.js";

const directory = mkdtempSync(join(tmpdir(), "agent-lab-loop-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/**
 * Timings, times, row ids and a session's incarnation (random when the store makes the row)
 * differ from run to run: of those, only whether each is there (its type, or null) is compared.
 * Everything else a loop writes must not differ.
 */
const timed = (key: string) =>
  key.endsWith("_ms") || key.endsWith("_at") || key === "id" || key === "incarnation";

function withoutTimes(row: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (timed(key)) {
      kept[key] = value === null ? null : typeof value;
      continue;
    }
    kept[key] =
      key === "details_json"
        ? withoutTimes(JSON.parse(value as string) as Record<string, unknown>)
        : value;
  }
  return kept;
}

let made = 0;

const TURNS = ["search for round cost 1", "search for round cost 2"];
/** The lab's sessions in the runtime bench: native tools, no payloads kept. */
const LAB_CONFIG = {
  tool_invocation_mode: "chat_agent_tools",
  capture: { payloads: "off" },
} as const;
const SESSION = { title: "lab", config_json: JSON.stringify(LabSessionConfig.parse(LAB_CONFIG)) };

/** Two turns of one session, and every row they wrote (timings as their types). */
async function rowsOf(checked: boolean, messages = TURNS) {
  const path = join(directory, `loop-${++made}.sqlite3`);
  new SqliteSessionStore(path).close();
  const loop = new HandWrittenLoop(path, new SimChatModel({}), { checked, session: SESSION });
  loop.startSession("session");
  const rounds: number[] = [];
  for (const message of messages) rounds.push(await loop.turn(message));
  loop.close();
  return { rounds, ...tablesOf(path) };
}

/** The lab's own turns, and every row they wrote (timings as their types). */
async function labRowsOf(messages = TURNS) {
  const path = join(directory, `lab-${++made}.sqlite3`);
  const store = new SqliteSessionStore(path);
  await store.ensureSession("session", {
    title: "lab",
    config: LabSessionConfig.parse(LAB_CONFIG),
  });
  const model = new SimChatModel({});
  const providers = createLabProviders();
  const rounds: number[] = [];
  for (const message of messages) {
    let count = 0;
    for await (const event of runTurn({
      store,
      session_id: "session",
      message,
      config: LAB_CONFIG,
      models: { chat: model, event: model },
      providers,
    })) {
      if (event.type === "round_end") count++;
    }
    rounds.push(count);
  }
  store.close();
  return { rounds, ...tablesOf(path) };
}

function tablesOf(path: string) {
  const db = new Database(path, { readonly: true });
  const read = (table: string) =>
    (db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[]).map(
      withoutTimes,
    );
  const rows = {
    messages: read("messages"),
    audit: read("audit_logs"),
    usage: read("usage_stats"),
    turns: read("turns"),
    sessions: read("sessions"),
  };
  db.close();
  return rows;
}

describe("the hand-written loop", () => {
  it("writes the rows the lab writes for the same turns, its session row included", async () => {
    const lab = await labRowsOf();
    const loop = await rowsOf(false);
    expect(lab.rounds).toEqual([2, 2]);
    expect(lab.messages.length).toBeGreaterThan(0);
    // The session's stored config is the lab's, as written by its store.
    expect(loop.sessions).toEqual(lab.sessions);
    expect(loop).toEqual(lab);
  });
});

describe("the hand-written loop with the store's checks (`checked`)", () => {
  it("writes the rows the plain loop writes: the checks and row builders change none of them", async () => {
    const plain = await rowsOf(false);
    const checked = await rowsOf(true);
    // Two rounds a turn (a tool call, then the answer), every kind of row written.
    expect(plain.rounds).toEqual([2, 2]);
    expect(plain.messages.length).toBeGreaterThan(0);
    expect(plain.audit.length).toBeGreaterThan(0);
    expect(plain.usage.length).toBeGreaterThan(0);
    expect(checked).toEqual(plain);
  });

  it("runs the store's row builders: a key in a tool's arguments is redacted in its audit rows", async () => {
    // The sim searches for what it is asked; the search's arguments reach the audit trail.
    const asked = ["search for sk-abcdefghijklmnopqrstuvwxyz"];
    const audited = (rows: Awaited<ReturnType<typeof rowsOf>>) => JSON.stringify(rows.audit);
    const plain = await rowsOf(false, asked);
    const checked = await rowsOf(true, asked);
    expect(audited(plain)).toContain("sk-abcdefghijklmnopqrstuvwxyz");
    expect(audited(checked)).not.toContain("sk-abcdefghijklmnopqrstuvwxyz");
    expect(audited(checked)).toContain(REDACTED);
  });
});
