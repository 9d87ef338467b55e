import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { HandWrittenLoop } from "./hand-written-loop.js";

const directory = mkdtempSync(join(tmpdir(), "agent-lab-loop-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Timings differ from run to run; everything else a loop writes must not. */
const timed = (key: string) => key.endsWith("_ms") || key === "created_at" || key === "id";

function withoutTimes(row: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (timed(key)) continue;
    kept[key] =
      key === "details_json"
        ? withoutTimes(JSON.parse(value as string) as Record<string, unknown>)
        : value;
  }
  return kept;
}

/** Two turns of one session, and every row they wrote (timings left out). */
async function rowsOf(checked: boolean) {
  const path = join(directory, `loop-${checked}.sqlite3`);
  new SqliteSessionStore(path).close();
  const loop = new HandWrittenLoop(path, new SimChatModel({}), { checked });
  loop.startSession("loop-session");
  const rounds = [
    await loop.turn("search for round cost 1"),
    await loop.turn("search for round cost 2"),
  ];
  loop.close();
  const db = new Database(path, { readonly: true });
  const read = (table: string) =>
    (db.prepare(`SELECT * FROM ${table} ORDER BY id`).all() as Record<string, unknown>[]).map(
      withoutTimes,
    );
  const rows = {
    rounds,
    messages: read("messages"),
    audit: read("audit_logs"),
    usage: read("usage_stats"),
    turns: db.prepare("SELECT turn_index, status FROM turns ORDER BY turn_index").all(),
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
});
