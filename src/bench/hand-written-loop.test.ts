import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { REDACTED } from "../domain/secrets.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { HandWrittenLoop } from "./hand-written-loop.js";

const directory = mkdtempSync(join(tmpdir(), "agent-lab-loop-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/**
 * Timings, times and row ids differ from run to run: of those, only whether each is there (its
 * type, or null) is compared. Everything else a loop writes must not differ.
 */
const timed = (key: string) => key.endsWith("_ms") || key.endsWith("_at") || key === "id";

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

/** Two turns of one session, and every row they wrote (timings as their types). */
async function rowsOf(
  checked: boolean,
  messages = ["search for round cost 1", "search for round cost 2"],
) {
  const path = join(directory, `loop-${++made}.sqlite3`);
  new SqliteSessionStore(path).close();
  const loop = new HandWrittenLoop(path, new SimChatModel({}), { checked });
  loop.startSession("loop-session");
  const rounds: number[] = [];
  for (const message of messages) rounds.push(await loop.turn(message));
  loop.close();
  const db = new Database(path, { readonly: true });
  const read = (table: string) =>
    (db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[]).map(
      withoutTimes,
    );
  const rows = {
    rounds,
    messages: read("messages"),
    audit: read("audit_logs"),
    usage: read("usage_stats"),
    turns: read("turns"),
    sessions: read("sessions"),
  };
  db.close();
  return rows;
}

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
