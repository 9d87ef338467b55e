import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { SessionChangedError } from "../../domain/errors.js";
import type { ExpectedSession } from "../store-inputs.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

/**
 * A claim that expects the session as its runner left it, made while another transaction holds
 * the session's row (another host's claim, or a write by hand), waits on the row lock. What it
 * then finds is the row as that transaction left it: changed when it committed, as it was when it
 * rolled back. The shared claim contract cannot show this: its claims never overlap.
 */
/** What the other transaction writes into the session's updated_at. */
const WRITTEN_AT = "2031-01-01T00:00:00.000Z";

describe("PostgresSessionStore: a claim that waited on the session's row lock", () => {
  let database: TestDatabase;
  let store: PostgresSessionStore;
  let other: pg.Client;
  let watcher: pg.Client;
  beforeEach(async () => {
    database = await createTestDatabase();
    store = await PostgresSessionStore.open(database.url);
    other = new pg.Client({ connectionString: database.url });
    watcher = new pg.Client({ connectionString: database.url });
    await other.connect();
    await watcher.connect();
  });
  afterEach(async () => {
    await other.end();
    await watcher.end();
    await store.close();
    await database.drop();
  });

  /** The session as a runner left it, read as the runtime reads it. */
  async function leftAsItWas(sessionId: string): Promise<ExpectedSession> {
    const stored = await store.getStoredSessionConfig(sessionId);
    if (stored === null) throw new Error(`no session ${sessionId}`);
    return { updated_at: stored.updated_at, incarnation: stored.incarnation };
  }

  /** Until a backend of this database waits on a lock (the claim, queued behind `other`). */
  async function untilOneWaitsOnALock(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await watcher.query<{ waiting: string }>(
        `SELECT count(*) AS waiting FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (Number(rows[0]?.waiting) === 1) return;
      if (Date.now() > deadline) throw new Error("no claim waited on the session's row lock");
      await sleep(10);
    }
  }

  /**
   * A claim of session "held" made while `other` holds the session's row (an uncommitted write
   * of its updated_at), handed back once it is known to wait on the row lock (a claim that did
   * not wait fails the test here), its outcome settled either way.
   */
  async function claimBehindAWrite(expected?: ExpectedSession) {
    await other.query("BEGIN");
    await other.query("UPDATE sessions SET updated_at = $1 WHERE id = $2", [WRITTEN_AT, "held"]);
    const outcome = store
      .claimTurn("held", {
        user_message: "go",
        runner: "1@here",
        ...(expected === undefined ? {} : { expected }),
      })
      .then(
        (claimed) => ({ claimed, error: undefined }),
        (error: unknown) => ({ claimed: undefined, error }),
      );
    await untilOneWaitsOnALock();
    // In an object: an async function's returned promise would be awaited, the claim with it.
    return { outcome };
  }

  async function turnsOf(sessionId: string) {
    return (await store.listTurns(sessionId)).map((turn) => turn.turn_index);
  }

  it("finds the session changed when the transaction holding its row commits a write", async () => {
    await store.createSession({ title: "held", config: {}, session_id: "held" });
    const { outcome } = await claimBehindAWrite(await leftAsItWas("held"));
    await other.query("COMMIT");
    const { error } = await outcome;
    expect(error).toBeInstanceOf(SessionChangedError);
    expect((error as SessionChangedError).code).toBe("session_changed");
    // Refused with nothing written: no turn, no count, the other transaction's updated_at kept.
    expect(await turnsOf("held")).toStrictEqual([]);
    const [listed] = await store.listSessions();
    expect(listed).toMatchObject({ id: "held", turn_count: 0 });
    expect(listed?.updated_at).toBe(WRITTEN_AT);
  });

  it("claims the session when the transaction holding its row rolls back", async () => {
    await store.createSession({ title: "held", config: {}, session_id: "held" });
    const { outcome } = await claimBehindAWrite(await leftAsItWas("held"));
    await other.query("ROLLBACK");
    const { claimed } = await outcome;
    expect(claimed).toMatchObject({ turn_index: 1, interrupted: [] });
    expect(await turnsOf("held")).toStrictEqual([1]);
    expect((await store.listSessions())[0]).toMatchObject({ id: "held", turn_count: 1 });
  });

  it("claims without an expectation once the other transaction commits: only kept sessions are checked", async () => {
    await store.createSession({ title: "held", config: {}, session_id: "held" });
    const { outcome } = await claimBehindAWrite();
    await other.query("COMMIT");
    const { claimed } = await outcome;
    expect(claimed).toMatchObject({ turn_index: 1 });
    expect(await turnsOf("held")).toStrictEqual([1]);
  });
});
