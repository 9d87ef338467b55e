import { setTimeout as sleep } from "node:timers/promises";

/**
 * A database that went away (a restart, a network cut), told apart from a refusal of the
 * statement: the driver's socket errors, PostgreSQL's "shutting down" and connection-class
 * SQLSTATEs (57P0x, 08xxx), along the error's causes (a StorageError keeps the driver's as cause).
 */
const AWAY_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "57P01",
  "57P02",
  "57P03",
]);
const AWAY_MESSAGE = /Connection terminated|has encountered a connection error|not queryable/;

export function isDatabaseAway(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    for (const code of [
      (current as { code?: unknown }).code,
      (current as { storageCode?: unknown }).storageCode,
    ]) {
      if (typeof code === "string" && (AWAY_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) {
        return true;
      }
    }
    if (AWAY_MESSAGE.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

export interface WaitForDatabase {
  /** How long to keep trying while the database is away. */
  limit_ms: number;
  /** Between tries. */
  every_ms: number;
  /** Told of each try that found the database away. */
  onAway?: ((error: unknown) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * `work`, tried again while the database is away, for at most `limit_ms`; any other failure, or
 * one past the limit, is thrown as it is.
 */
export async function untilDatabaseAnswers<T>(
  work: () => Promise<T>,
  options: WaitForDatabase,
): Promise<T> {
  const since = Date.now();
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isDatabaseAway(error) || options.signal?.aborted === true) throw error;
      if (Date.now() - since >= options.limit_ms) throw error;
      options.onAway?.(error);
      await sleep(
        options.every_ms,
        undefined,
        options.signal === undefined ? {} : { signal: options.signal },
      ).catch(() => {});
    }
  }
}
