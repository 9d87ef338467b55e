import { setTimeout as sleep } from "node:timers/promises";

/** Socket errors of a connection that broke or never opened (a restart, a network cut). */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
/** PostgreSQL shutting down or restarting (57P0x) and its connection-exception class (08xxx). */
const AWAY_SQLSTATE = /^(?:57P0[123]|08[0-9A-Z]{3})$/;

/**
 * The driver's word for a connection that broke or never opened, on this error alone: a socket
 * error, or node-postgres's message on the query that was running or the next one (`not
 * queryable`). What the connection had open was rolled back, unless the break came while its
 * COMMIT was on the way: then whether it took is not known.
 */
export function isLostConnection(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && SOCKET_CODES.has(code)) return true;
  return /Connection terminated|has encountered a connection error|not queryable/.test(
    error.message,
  );
}

/**
 * A database that went away, known from a turn's `error` event (its `database_away`) where the
 * driver's error stayed in the turn (run-execution.ts).
 */
export class DatabaseWentAway extends Error {}

/**
 * A database that went away, told apart from a refusal of the statement: a lost connection or
 * PostgreSQL's "shutting down" SQLSTATEs, along the error's causes (a StorageError keeps the
 * driver's error as its cause, and the SQLSTATE as `storageCode`).
 */
export function isDatabaseAway(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const error: Error = current;
    if (isLostConnection(error) || error instanceof DatabaseWentAway) return true;
    for (const code of [
      (error as { code?: unknown }).code,
      (error as { storageCode?: unknown }).storageCode,
    ]) {
      if (typeof code === "string" && AWAY_SQLSTATE.test(code)) return true;
    }
    current = error.cause;
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
