import type pg from "pg";
import { storageError, watchConnection } from "./connection.js";

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when
 * it throws (a refusal changes nothing), the connection back to the pool either way. A database
 * refusal comes out as a StorageError; the lab's own errors pass as they are.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    throw storageError(error);
  });
  const watch = watchConnection(client);
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((rollback: unknown) => {
      // A connection that cannot even roll back is not given to the next caller.
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw storageError(error);
  } finally {
    watch.done();
    client.release(broken ?? watch.lost());
  }
}

/** A consistent snapshot for reads of several statements (an export, a page and its session). */
export const READ_SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/** One statement's refusal (or a read's lost connection) as a StorageError (see inTransaction). */
export async function write<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw storageError(error);
  }
}
