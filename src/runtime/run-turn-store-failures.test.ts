import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { assertStrictHistory } from "../../test/runtime/strict-history.js";
import {
  collectTurn,
  completedTurn,
  eventsOfType,
  MODES,
} from "../../test/runtime/turn-harness.js";
import { StorageError, TurnInProgressError } from "../domain/errors.js";
import type { SessionStore } from "../store/session-store.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import type { AppendRecordsOptions } from "../store/store-inputs.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import type { Tool } from "../tools/tool.js";

/**
 * A failure inside a turn ends the turn: whatever throws after the turn is claimed (the disk
 * filling up, any database error, a bug), the turn is stored as failed with its error, reported
 * by an `error` and a `turn_end`, and the session is free for the next turn, in any process.
 */

const SEARCH = "search for sqlite wal mode";

/** mock_search with an answer far larger than the pages left on the "disk". */
function hugeSearch(): Tool[] {
  const [search, ticket] = createBuiltinTools();
  if (!search || !ticket) throw new Error("the built-in tools changed");
  return [{ ...search, execute: async () => ({ results: "x".repeat(400_000) }) }, ticket];
}

/** The batch that writes a turn's end (its last round, the turn_end row, the completion). */
const endsTurn = (records: unknown) =>
  (records as AppendRecordsOptions).complete_turn !== undefined;

/** The store, except that `method` throws `error` when `when` says so. */
function failing<Name extends keyof SessionStore>(
  store: SessionStore,
  method: Name,
  error: Error,
  when: (...args: unknown[]) => boolean = () => true,
): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== method || typeof value !== "function") {
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (...args: unknown[]) => {
        if (when(...args)) throw error;
        return value.apply(target, args);
      };
    },
  });
}

/** A PostgreSQL store's error for a connection that broke (a socket error, no SQLSTATE). */
const lostConnection = () =>
  new StorageError(
    "read ECONNRESET",
    null,
    { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) },
    "the connection to the database failed",
  );

describe.each(MODES)("runTurn when the store fails mid-turn, %s", (mode) => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let path: string;
  const opened: SqliteSessionStore[] = [];
  const open = (options?: { max_page_count: number }) => {
    const store = new SqliteSessionStore(path, options);
    opened.push(store);
    return store;
  };
  beforeEach(() => {
    directory = temporaryDirectory();
    path = join(directory.path, "lab.sqlite3");
    const setup = open();
    setup.createSession({ title: "s", session_id: "s", config: { tool_invocation_mode: mode } });
  });
  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
    directory.remove();
  });

  /** Another process (a runner whose liveness check says every runner is alive) starts a turn. */
  const otherProcessClaims = (store: SessionStore) =>
    store.claimTurn("s", {
      user_message: "from elsewhere",
      runner: "999999@another-host",
      is_runner_alive: () => true,
    });

  it("a full disk (SQLITE_FULL) mid-turn: failed with its error, error and turn_end emitted, the session free at once", async () => {
    const probe = open();
    const full = open({ max_page_count: probe.pageCount() + 2 });

    const turn = await collectTurn({
      store: full,
      session_id: "s",
      message: SEARCH,
      tools: hugeSearch(),
    });

    expect(turn.error).toBeNull();
    expect(turn.end).toMatchObject({ session_id: "s", turn_index: 1, status: "failed" });
    const errors = eventsOfType(turn.events, "error");
    expect(errors.at(-1)).toMatchObject({ code: "storage_failed" });
    expect(errors.at(-1)?.message).toMatch(/database or disk is full \(SQLITE_FULL\)/);
    // A refusal, not a database that went away; the database's code is a field of its own.
    expect(errors.at(-1)).not.toHaveProperty("database_away");
    expect(errors.at(-1)).toMatchObject({ storage_code: "SQLITE_FULL" });
    expect(turn.events.at(-1)?.type).toBe("turn_end");

    const other = open();
    expect(other.listTurns("s").map((t) => [t.turn_index, t.status])).toEqual([[1, "failed"]]);
    const failed = other.listAuditLogs("s").filter((entry) => entry.event === "turn_failed");
    expect(failed.at(-1)).toMatchObject({
      turn_index: 1,
      details: { code: "storage_failed", storage_code: "SQLITE_FULL" },
    });
    assertStrictHistory(other.listMessages("s"));
    expect((await otherProcessClaims(other)).turn_index).toBe(2);
  });

  it("a connection lost mid-turn: the error event says the database went away, the audit log too", async () => {
    const store = failing(open(), "appendRecords", lostConnection(), (_id, records) =>
      endsTurn(records),
    );
    const turn = await collectTurn({ store, session_id: "s", message: SEARCH });
    expect(turn.end).toMatchObject({ status: "failed" });
    expect(eventsOfType(turn.events, "error").at(-1)).toEqual({
      type: "error",
      code: "storage_failed",
      message: "the connection to the database failed: read ECONNRESET",
      database_away: true,
    });
    const failed = open()
      .listAuditLogs("s")
      .filter((entry) => entry.event === "turn_failed");
    expect(failed.at(-1)?.details).toMatchObject({ database_away: true });
  });

  it("a PostgreSQL server shutting down mid-turn: its SQLSTATE is the event's storage_code, and it went away", async () => {
    const shutdown = new StorageError(
      "terminating connection due to administrator command",
      "57P01",
    );
    const store = failing(open(), "appendRecords", shutdown, (_id, records) => endsTurn(records));
    const turn = await collectTurn({ store, session_id: "s", message: SEARCH });
    expect(eventsOfType(turn.events, "error").at(-1)).toEqual({
      type: "error",
      code: "storage_failed",
      message:
        "the database refused the write: terminating connection due to administrator command (57P01)",
      storage_code: "57P01",
      database_away: true,
    });
  });

  it("a connection lost inside a round (the approval's live audit row): the round's error event says so too", async () => {
    const store = failing(
      open(),
      "appendAudit",
      lostConnection(),
      (_id, entry) => (entry as { event: string }).event === "approval_required",
    );
    const turn = await collectTurn({
      store,
      session_id: "s",
      message: "file a ticket about WAL docs",
      approve: async () => ({ decision: "approve", decided_by: "user" }),
    });
    expect(turn.end).toMatchObject({ status: "failed" });
    expect(eventsOfType(turn.events, "error").at(-1)).toMatchObject({
      code: "storage_failed",
      database_away: true,
    });
    const failed = open()
      .listAuditLogs("s")
      .filter((entry) => entry.event === "turn_failed");
    expect(failed.at(-1)?.details).toMatchObject({ database_away: true });
  });

  it("a refused claim (the disk full before the turn) throws a StorageError and stores nothing", async () => {
    const probe = open();
    const full = open({ max_page_count: probe.pageCount() });
    const turn = await collectTurn({ store: full, session_id: "s", message: "y".repeat(200_000) });
    expect(turn.error).toBeInstanceOf(StorageError);
    expect((turn.error as Error).message).toMatch(/^the database refused the write: .*SQLITE_FULL/);
    expect(turn.events).toEqual([]);
    expect(probe.listTurns("s")).toEqual([]);
    expect(probe.listMessages("s")).toEqual([]);
    await completedTurn({ store: probe, session_id: "s", message: "hello" });
  });

  // The turn_start row is written with the claim (a refused claim is the test above).
  it.each([
    // A round's rows are written together at its end (runtime/turn-records.ts).
    [
      "appendRecords of a round's messages",
      "appendRecords",
      (_id: unknown, records: unknown) =>
        ((records as AppendRecordsOptions).message_groups ?? []).length > 0,
    ],
    // A call's captured payload is written like any other row of the turn (capture is on for the sim).
    [
      "appendRecords of a model call's payload",
      "appendRecords",
      (_id: unknown, records: unknown) =>
        ((records as AppendRecordsOptions).payloads ?? []).length > 0,
    ],
    [
      "appendRecords of the turn's end",
      "appendRecords",
      (_id: unknown, records: unknown) => endsTurn(records),
    ],
  ] as const)(
    "any throw after the claim (%s): failed, error and turn_end, the session free",
    async (_label, method, when) => {
      const store = open();
      const turn = await collectTurn({
        store: failing(
          store,
          method,
          new TypeError("boom"),
          when as (...args: unknown[]) => boolean,
        ),
        session_id: "s",
        message: SEARCH,
      });

      expect(turn.error).toBeNull();
      expect(turn.end).toMatchObject({ turn_index: 1, status: "failed" });
      expect(eventsOfType(turn.events, "error").at(-1)).toEqual({
        type: "error",
        code: "internal_error",
        message: "boom",
      });
      expect(store.listTurns("s").map((t) => [t.turn_index, t.status])).toEqual([[1, "failed"]]);
      expect(
        store
          .listAuditLogs("s")
          .filter((entry) => entry.event === "turn_failed")
          .at(-1)?.details,
      ).toEqual({ code: "internal_error", message: "boom" });
      assertStrictHistory(store.listMessages("s"));
      // This process runs the next turn at once, and so could another.
      const next = await completedTurn({ store, session_id: "s", message: "hello" });
      expect(next.turn_index).toBe(2);
      expect((await otherProcessClaims(store)).turn_index).toBe(3);
    },
  );

  it("a throw after the claim whose message carries a key: redacted in the error event and the audit log", async () => {
    const store = open();
    const key = "sk-live-0123456789abcdefghijklmnop";
    const turn = await collectTurn({
      store: failing(
        store,
        "appendRecords",
        new Error(`upstream said: bad key ${key}`),
        (_id, records) => endsTurn(records),
      ),
      session_id: "s",
      message: SEARCH,
    });
    expect(turn.end).toMatchObject({ status: "failed" });
    const error = eventsOfType(turn.events, "error").at(-1);
    expect(error?.message).toContain("upstream said: bad key");
    expect(error?.message).not.toContain(key);
    const audit = JSON.stringify(store.listAuditLogs("s"));
    expect(audit).toContain("turn_failed");
    expect(audit).not.toContain(key);
  });

  it("an end the database refuses too is retried until it is stored, then the session is free", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const store = open();
      const full = new StorageError("database or disk is full", "SQLITE_FULL");
      // The turn's end is written with its last round (appendRecords' complete_turn): refused,
      // the turn fails, and the failed end (completeTurn) is refused once more, then retried.
      let refusals = 1;
      const flaky = failing(
        failing(store, "appendRecords", full, (_id, records) =>
          Boolean((records as AppendRecordsOptions).complete_turn),
        ),
        "completeTurn",
        full,
        () => refusals-- > 0,
      );
      const turn = await collectTurn({ store: flaky, session_id: "s", message: "hello" });
      expect(turn.end).toMatchObject({ turn_index: 1, status: "failed" });
      expect(eventsOfType(turn.events, "error").at(-1)?.code).toBe("storage_failed");
      // Not stored yet: the runner (this live process) still holds the session for the others.
      expect(store.listTurns("s").map((t) => t.status)).toEqual(["running"]);
      await expect(Promise.resolve().then(() => otherProcessClaims(store))).rejects.toBeInstanceOf(
        TurnInProgressError,
      );

      await vi.advanceTimersByTimeAsync(1_000);
      expect(store.listTurns("s").map((t) => t.status)).toEqual(["failed"]);
      expect((await otherProcessClaims(store)).turn_index).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
