import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { distDir, repoRoot } from "../../../test/paths.js";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { TurnInProgressError } from "../../domain/errors.js";
import type { ClaimedTurn } from "../session-store.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

const LEASE_MS = 1_500;

/** Claims until the running turn's lease has run out (a refusal means it has not yet). */
async function claimOnceFree(store: PostgresSessionStore, sessionId: string): Promise<ClaimedTurn> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await store.claimTurn(sessionId, { user_message: "after", runner: "2@here" });
    } catch (error) {
      if (!(error instanceof TurnInProgressError) || Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

describe("PostgresSessionStore: turn leases across processes", () => {
  let database: TestDatabase;
  let store: PostgresSessionStore;
  beforeEach(async () => {
    database = await createTestDatabase();
    store = await PostgresSessionStore.open(database.url, { lease_ms: LEASE_MS });
  });
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it("a live runner's renewed lease blocks claims; once it is SIGKILLed its turn is interrupted", async () => {
    await store.createSession({ title: "held", config: {}, session_id: "held" });
    const child = spawn(
      process.execPath,
      [
        join(repoRoot, "test/workers/postgres-store.mjs"),
        distDir,
        "claim",
        database.url,
        "held",
        String(LEASE_MS),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      expect(JSON.parse((await lines.next()).value as string)).toStrictEqual({ turn_index: 1 });
      const runner = `${child.pid}@another-host`;

      // Past two whole leases the turn is still held: its store renews it. The runtime's liveness
      // check answers "dead" for a runner on another host (it cannot see it): the lease decides.
      for (const pause of [0, 2 * LEASE_MS]) {
        await sleep(pause);
        for (const isRunnerAlive of [undefined, () => false]) {
          const refusal = await store
            .claimTurn("held", {
              user_message: "too soon",
              runner: "2@here",
              ...(isRunnerAlive === undefined ? {} : { is_runner_alive: isRunnerAlive }),
            })
            .catch((error: unknown) => error);
          expect(refusal).toBeInstanceOf(TurnInProgressError);
          expect(refusal).toMatchObject({ turnIndex: 1, runner });
          // Its pid says nothing here (another host): the message says what frees the session.
          expect((refusal as Error).message).toMatch(
            /; if its runner has died, its lease frees the session in \d+ s$/,
          );
        }
      }

      child.kill("SIGKILL");
      await once(child, "exit");
      // Nobody renews the lease now; the next claim after it runs out takes the session.
      expect(await claimOnceFree(store, "held")).toStrictEqual({ turn_index: 2, interrupted: [1] });
      expect((await store.listTurns("held")).map((turn) => [turn.turn_index, turn.status])).toEqual(
        [
          [1, "interrupted"],
          [2, "running"],
        ],
      );
      expect(
        (await store.listAuditLogs("held")).map(({ event, turn_index, details }) => ({
          event,
          turn_index,
          details,
        })),
      ).toStrictEqual([
        {
          event: "turn_interrupted",
          turn_index: 1,
          details: { runner, reason: "its process ended before the turn did" },
        },
      ]);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a closed store stops renewing: its unfinished turn is interrupted once the lease runs out", async () => {
    await store.createSession({ title: "left", config: {}, session_id: "left" });
    const other = await PostgresSessionStore.open(database.url, { lease_ms: LEASE_MS });
    await other.claimTurn("left", { user_message: "left running", runner: "1@gone" });
    await other.close();
    expect(await claimOnceFree(store, "left")).toStrictEqual({ turn_index: 2, interrupted: [1] });
  });

  it("a failed renewal is retried at the next tick: the runner keeps its turn", async () => {
    await store.createSession({ title: "kept", config: {}, session_id: "kept" });
    const holder = await PostgresSessionStore.open(database.url, { lease_ms: LEASE_MS });
    try {
      await holder.claimTurn("kept", { user_message: "long turn", runner: "1@elsewhere" });
      // The database refuses the holder's next renewal (only that one): a real failed UPDATE.
      await store.pool.query(`
        CREATE SEQUENCE renewals;
        CREATE FUNCTION refuse_first_renewal() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF nextval('renewals') = 1 THEN RAISE EXCEPTION 'renewal refused by the test'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_first_renewal BEFORE UPDATE OF lease_expires_at ON turns
          FOR EACH ROW EXECUTE FUNCTION refuse_first_renewal();`);
      const leaseOf = async () =>
        (
          await store.pool.query(
            "SELECT lease_expires_at FROM turns WHERE session_id = 'kept' AND turn_index = 1",
          )
        ).rows[0].lease_expires_at as Date;
      const claimed = await leaseOf();
      // The refused renewal, then at least one that went through (one tick each, a third of a lease).
      const deadline = Date.now() + 20_000;
      const attempts = async () =>
        Number((await store.pool.query("SELECT last_value FROM renewals")).rows[0].last_value);
      while ((await attempts()) < 3 && Date.now() < deadline) await sleep(50);
      expect(await attempts()).toBeGreaterThanOrEqual(3);
      // Renewed after the refusal: the lease moved on, and a claimer trusting only it is refused.
      expect((await leaseOf()).getTime()).toBeGreaterThan(claimed.getTime());
      const refusal = await store
        .claimTurn("kept", {
          user_message: "too soon",
          runner: "2@here",
          is_runner_alive: () => false,
        })
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(TurnInProgressError);
      expect((await store.listTurns("kept")).map((turn) => turn.status)).toEqual(["running"]);
    } finally {
      await holder.close();
    }
  });

  it("claims racing on separate connections: the session's row lock lets exactly one win", async () => {
    await store.createSession({ title: "race", config: {}, session_id: "race" });
    const others = await Promise.all(
      [1, 2, 3].map(() => PostgresSessionStore.open(database.url, { lease_ms: LEASE_MS })),
    );
    try {
      const outcomes = await Promise.allSettled(
        [store, ...others, store, ...others].map((claimer, index) =>
          claimer.claimTurn("race", { user_message: `claim ${index}`, runner: `${index}@h` }),
        ),
      );
      const won = outcomes.filter((outcome) => outcome.status === "fulfilled");
      expect(won.map((outcome) => outcome.value)).toStrictEqual([
        { turn_index: 1, interrupted: [] },
      ]);
      for (const outcome of outcomes) {
        if (outcome.status === "rejected")
          expect(outcome.reason).toBeInstanceOf(TurnInProgressError);
      }
      expect(await store.listTurns("race")).toHaveLength(1);
      expect(await store.listMessages("race")).toHaveLength(1);
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });

  it("a completed turn releases its lease: the next claim takes the session at once", async () => {
    await store.createSession({ title: "done", config: {}, session_id: "done" });
    await store.claimTurn("done", { user_message: "one", runner: "1@here" });
    await store.completeTurn("done", { turn_index: 1, wall_time_ms: 2 });
    await store.appendRecords("done", {});
    expect(await store.claimTurn("done", { user_message: "two", runner: "1@here" })).toStrictEqual({
      turn_index: 2,
      interrupted: [],
    });
    await store.appendRecords("done", { complete_turn: { turn_index: 2, wall_time_ms: 1 } });
    const turns = await store.pool.query(
      "SELECT turn_index, status, lease_expires_at FROM turns WHERE session_id = 'done' ORDER BY turn_index",
    );
    expect(turns.rows).toStrictEqual([
      { turn_index: 1, status: "completed", lease_expires_at: null },
      { turn_index: 2, status: "completed", lease_expires_at: null },
    ]);
  });
});
