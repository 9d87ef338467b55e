import { describe, expect, it } from "vitest";
import { DatabaseWentAway, isDatabaseAway, untilDatabaseAnswers } from "./database-away.js";
import { StorageError } from "./errors.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isDatabaseAway", () => {
  it("is true for a lost connection or a server shutting down, as thrown or as a StorageError's cause", () => {
    for (const error of [
      withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
      new Error("Connection terminated unexpectedly"),
      withCode("the database system is shutting down", "57P03"),
      withCode("terminating connection due to administrator command", "57P01"),
      new StorageError("server closed the connection", "08006"),
      new StorageError("read ECONNRESET", null, {
        cause: withCode("read ECONNRESET", "ECONNRESET"),
      }),
      // A turn's storage failure as a run reads it: the event said the database went away.
      new StorageError("the connection to the database failed", null, {
        cause: new DatabaseWentAway("the connection to the database failed"),
      }),
    ]) {
      expect(isDatabaseAway(error), error.message).toBe(true);
    }
  });

  it("is false for a refusal of the statement, a lab error or anything else", () => {
    for (const error of [
      new StorageError("duplicate key value violates unique constraint", "23505"),
      new StorageError("database or disk is full", "SQLITE_FULL"),
      withCode("permission denied for schema public", "42501"),
      new Error("Cannot use a pool after calling end on the pool"),
      // Socket words in a message are no evidence: a run learns it from the turn's event.
      new StorageError("the connection to the database failed: connect ECONNREFUSED", null),
      "ECONNREFUSED",
    ]) {
      expect(isDatabaseAway(error), String(error)).toBe(false);
    }
  });
});

describe("untilDatabaseAnswers", () => {
  it("tries again while the database is away, and throws anything else at once", async () => {
    let calls = 0;
    const away: unknown[] = [];
    const answer = await untilDatabaseAnswers(
      async () => {
        calls++;
        if (calls < 3) throw withCode("connect ECONNREFUSED", "ECONNREFUSED");
        return "answered";
      },
      { limit_ms: 5_000, every_ms: 5, onAway: (error) => away.push(error) },
    );
    expect([answer, calls, away.length]).toEqual(["answered", 3, 2]);
    let refusals = 0;
    const refused = untilDatabaseAnswers(
      async () => {
        refusals++;
        throw new StorageError("duplicate key", "23505");
      },
      { limit_ms: 5_000, every_ms: 5 },
    );
    await expect(refused).rejects.toThrow("duplicate key");
    expect(refusals).toBe(1);
  });

  it("gives up with the database's error past the limit", async () => {
    const started = Date.now();
    const gone = untilDatabaseAnswers(
      async () => {
        throw withCode("connect ECONNREFUSED", "ECONNREFUSED");
      },
      { limit_ms: 100, every_ms: 10 },
    );
    await expect(gone).rejects.toThrow("connect ECONNREFUSED");
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });
});
