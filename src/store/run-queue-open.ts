import { InvalidInputError } from "../domain/errors.js";
import type { RunQueue } from "./run-queue.js";
import type { SessionStore } from "./session-store.js";
import { SqliteRunQueue } from "./sqlite/run-queue.js";
import { SqliteSessionStore } from "./sqlite/sqlite-session-store.js";

/**
 * The run queue in the same database as the store: SQLite's file, or PostgreSQL through the
 * store's own pool. A database only one process can see has no use for a queue.
 */
export async function openRunQueue(store: SessionStore): Promise<RunQueue> {
  if (!store.persistent) {
    throw new InvalidInputError(
      "workers share the lab's database, and an in-memory database is private to one process: name a database file or a postgres:// URL with --db",
    );
  }
  if (store instanceof SqliteSessionStore) return new SqliteRunQueue(store.path);
  const pool = (store as { pool?: unknown }).pool;
  if (pool !== undefined) {
    const { PostgresRunQueue } = await import("./postgres/run-queue.js");
    return PostgresRunQueue.open(pool as Parameters<typeof PostgresRunQueue.open>[0]);
  }
  throw new InvalidInputError("this store has no run queue: use a SQLite file or PostgreSQL");
}
