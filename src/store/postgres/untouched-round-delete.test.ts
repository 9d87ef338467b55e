import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { SessionNotFoundError } from "../../domain/errors.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

/**
 * A round written with `touch_session: false` moves no row of `sessions`, so nothing of the
 * touching UPDATE's row lock is left to order it after a concurrent `deleteSession` (another
 * process, a worker dropping an earlier attempt): its read must lock the row itself, or its rows
 * outlive the session. SQLite's BEGIN IMMEDIATE serializes the two writers whole.
 */
describe("PostgresSessionStore: a round that leaves updated_at against a concurrent delete", () => {
  let database: TestDatabase;
  let store: PostgresSessionStore;
  let deleter: pg.Client;
  beforeEach(async () => {
    database = await createTestDatabase();
    store = await PostgresSessionStore.open(database.url);
    deleter = new pg.Client({ connectionString: database.url });
    await deleter.connect();
  });
  afterEach(async () => {
    await deleter.end();
    await store.close();
    await database.drop();
  });

  /** Whether a backend of this database waits on a lock now. */
  async function someoneWaits(): Promise<boolean> {
    const waiting = await deleter.query(
      "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
      [database.name],
    );
    return (waiting.rowCount ?? 0) > 0;
  }

  it("waits for the delete holding the session, then refuses and leaves no row behind", async () => {
    await store.createSession({ title: "s", config: {}, session_id: "s" });
    await store.startTurn("s", { turn_index: 1, user_message: "one" });
    // What deleteSession does, held open: the row locked FOR UPDATE, the session's rows gone.
    await deleter.query("BEGIN");
    await deleter.query("SELECT 1 FROM sessions WHERE id = 's' FOR UPDATE");
    for (const table of ["messages", "audit_logs", "usage_stats", "turns"]) {
      await deleter.query(`DELETE FROM ${table} WHERE session_id = 's'`);
    }
    await deleter.query("DELETE FROM sessions WHERE id = 's'");

    let settled = false;
    const round = Promise.resolve(
      store.appendRecords("s", {
        touch_session: false,
        message_groups: [{ turn_index: 1, messages: [{ role: "assistant", content: "hi" }] }],
        audit: [{ event: "chat_agent_response", details: {}, turn_index: 1, round_index: 1 }],
      }),
    ).finally(() => {
      settled = true;
    });
    round.catch(() => {});
    // Until the round either finished without waiting (the fault) or waits on the row lock.
    const deadline = Date.now() + 20_000;
    while (!settled && !(await someoneWaits()) && Date.now() < deadline) await sleep(20);
    await deleter.query("COMMIT");

    await expect(round).rejects.toBeInstanceOf(SessionNotFoundError);
    const left = await deleter.query(
      `SELECT (SELECT count(*) FROM messages WHERE session_id = 's')::int AS messages,
              (SELECT count(*) FROM audit_logs WHERE session_id = 's')::int AS audit`,
    );
    expect(left.rows[0]).toEqual({ messages: 0, audit: 0 });
  });
});
