import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { SessionChangedError, SessionNotFoundError } from "../../domain/errors.js";
import type { ClaimedTurn } from "../session-store.js";
import type { ExpectedSession } from "../store-inputs.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

/** What the other transaction writes into the session's updated_at. */
const WRITTEN_AT = "2031-01-01T00:00:00.000Z";

type Outcome =
  | { claimed: ClaimedTurn; error?: undefined }
  | { claimed?: undefined; error: unknown };

/**
 * A claim made while another transaction holds the session's row (another host's claim, a write
 * or a delete by hand) waits on the row lock. What it then finds is the row as that transaction
 * left it: changed or gone when it committed, as it was when it rolled back. The shared claim
 * contract cannot show this: its claims never overlap.
 */
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
    await store.createSession({ title: "held", config: {}, session_id: "held" });
  });
  afterEach(async () => {
    // Each closed whatever happened to the others: a test that failed mid-way leaves no
    // connection open on the database it drops.
    await Promise.allSettled([other.end(), watcher.end()]);
    await store.close().catch(() => {});
    await database.drop();
  });

  /** The session as a runner left it, read as the runtime reads it. */
  async function leftAsItWas(): Promise<ExpectedSession> {
    const stored = await store.getStoredSessionConfig("held");
    if (stored === null) throw new Error("no session held");
    return { updated_at: stored.updated_at, incarnation: stored.incarnation };
  }

  /**
   * Until a backend is blocked by `other` (the claim, queued on the row `other` holds). A claim
   * that settles first, not having waited, fails the test with what it settled with.
   */
  async function untilBlockedByOther(outcome: Promise<Outcome>): Promise<void> {
    // In an object: TypeScript would take a `let` set only in the callback to be always null.
    const seen: { outcome: Outcome | null } = { outcome: null };
    void outcome.then((value) => {
      seen.outcome = value;
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await watcher.query<{ blocked: string }>(
        `SELECT count(*) AS blocked FROM pg_stat_activity
         WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))`,
        // pg sets processID at connect; @types/pg leaves it out.
        [(other as pg.Client & { processID: number }).processID],
      );
      if (Number(rows[0]?.blocked) >= 1) return;
      const early = seen.outcome;
      if (early !== null) {
        const what = early.claimed
          ? `claimed turn ${early.claimed.turn_index}`
          : `failed: ${String(early.error)}`;
        throw new Error(`the claim did not wait on the row lock: it ${what}`);
      }
      if (Date.now() > deadline) throw new Error("no claim waited on the session's row lock");
      await sleep(10);
    }
  }

  /**
   * A claim of session "held" made while `other` holds the session's row (`change`, uncommitted),
   * handed back once it is known to wait on the row lock, its outcome settled either way.
   */
  async function claimBehind(change: "write" | "delete", expected?: ExpectedSession) {
    await other.query("BEGIN");
    if (change === "write") {
      await other.query("UPDATE sessions SET updated_at = $1 WHERE id = $2", [WRITTEN_AT, "held"]);
    } else {
      await other.query("DELETE FROM sessions WHERE id = $1", ["held"]);
    }
    const outcome: Promise<Outcome> = store
      .claimTurn("held", {
        user_message: "go",
        runner: "1@here",
        ...(expected === undefined ? {} : { expected }),
      })
      .then(
        (claimed) => ({ claimed }),
        (error: unknown) => ({ error }),
      );
    await untilBlockedByOther(outcome);
    // In an object: an async function's returned promise would be awaited, the claim with it.
    return { outcome };
  }

  async function turnsOfHeld() {
    return (await store.listTurns("held")).map((turn) => turn.turn_index);
  }

  it("finds the session changed when the transaction holding its row commits a write", async () => {
    const { outcome } = await claimBehind("write", await leftAsItWas());
    await other.query("COMMIT");
    const { error } = await outcome;
    expect(error).toBeInstanceOf(SessionChangedError);
    expect((error as SessionChangedError).code).toBe("session_changed");
    // Refused with nothing written: no turn, no count, the other transaction's updated_at kept.
    expect(await turnsOfHeld()).toStrictEqual([]);
    const [listed] = await store.listSessions();
    expect(listed).toMatchObject({ id: "held", turn_count: 0 });
    expect(listed?.updated_at).toBe(WRITTEN_AT);
  });

  it("claims the session when the transaction holding its row rolls back", async () => {
    const { outcome } = await claimBehind("write", await leftAsItWas());
    await other.query("ROLLBACK");
    const { claimed } = await outcome;
    expect(claimed).toMatchObject({ turn_index: 1, interrupted: [] });
    expect(await turnsOfHeld()).toStrictEqual([1]);
    expect((await store.listSessions())[0]).toMatchObject({ id: "held", turn_count: 1 });
  });

  it("claims without an expectation once the other transaction commits: only a claim that expects the session checks it", async () => {
    const { outcome } = await claimBehind("write");
    await other.query("COMMIT");
    const { claimed } = await outcome;
    expect(claimed).toMatchObject({ turn_index: 1 });
    expect(await turnsOfHeld()).toStrictEqual([1]);
  });

  it.each([
    ["expecting the session", true],
    ["expecting nothing", false],
  ])(
    "finds no session when the transaction holding its row commits its deletion (%s)",
    async (_, expecting) => {
      const { outcome } = await claimBehind("delete", expecting ? await leftAsItWas() : undefined);
      await other.query("COMMIT");
      const { error } = await outcome;
      expect(error).toBeInstanceOf(SessionNotFoundError);
      expect(await store.listSessions()).toStrictEqual([]);
    },
  );
});
