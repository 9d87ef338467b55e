import { createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { StorageError } from "../../domain/errors.js";
import { DatabaseOpenError, labExists } from "../open-store.js";
import { createPool } from "./connection.js";
import { PostgresSessionStore } from "./postgres-session-store.js";
import { inTransaction } from "./transaction.js";

/**
 * The server goes away under the lab: a restart, `pg_terminate_backend`. What the lab was doing
 * fails as a refusal it reports; the process does not crash on the driver's `error` event (a
 * crash here fails the test file), and the next request gets a new connection.
 */

let database: TestDatabase;
beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(() => database.drop());

async function terminate(url: string, pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
  } finally {
    await admin.end();
  }
}

describe("a connection the server drops", () => {
  it("between two queries of a transaction: the transaction fails as a storage error, the pool goes on", async () => {
    const pool = createPool(database.url, {});
    try {
      const failure = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        await terminate(database.url, rows[0]?.pid as number);
        // The driver hears of the loss while the lab holds the connection and runs no query.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await client.query("SELECT 1");
      }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(StorageError);
      const { rows } = await pool.query<{ one: number }>("SELECT 1 AS one");
      expect(rows[0]?.one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("under a store between two calls: the next call works on a new connection", async () => {
    const store = await PostgresSessionStore.open(database.url);
    try {
      await store.createSession({ title: "before", config: {} });
      const { rows } = await store.pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
      );
      for (const row of rows) await terminate(database.url, row.pid);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await store.createSession({ title: "after", config: {} });
      expect((await store.listSessions()).map((session) => session.title).sort()).toEqual([
        "after",
        "before",
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("a server that takes the connection and never answers", () => {
  let silent: Server;
  const sockets: Socket[] = [];
  beforeEach(async () => {
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on("data", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  });
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it("is an open error after the connect timeout for a read, not a read that hangs", async () => {
    const address = silent.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const started = performance.now();
    const failure = await labExists(`postgres://lab:secret-pw@127.0.0.1:${port}/lab`).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DatabaseOpenError);
    expect(String((failure as Error).message)).not.toContain("secret-pw");
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 30_000);
});
