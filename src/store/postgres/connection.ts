import pg from "pg";
import { DatabaseOpenError, StorageError } from "../../domain/errors.js";

/**
 * The `pg` pool of a store, and the one place a database URL is turned into text: a URL carries
 * its password, which is a secret like an API key (never printed, logged or put in an error).
 */

/** `postgres://user@host:port/db`: the URL without its password (or query string). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username === "" ? "" : `${parsed.username}@`;
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "(an unparsable database URL)";
  }
}

/** Where a URL points, for an error: host:port and the database, nothing else. */
export function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || "(default)";
    return `database ${database} on ${parsed.hostname || "localhost"}:${parsed.port || "5432"}`;
  } catch {
    return "a database at an unparsable URL";
  }
}

/** `text` with every spelling of the URL's password taken out (a driver might echo it). */
export function withoutPassword(text: string, url: string): string {
  let password = "";
  try {
    password = new URL(url).password;
  } catch {
    return text;
  }
  if (password === "") return text;
  let clean = text;
  for (const spelling of new Set([password, decodeURIComponent(password)])) {
    if (spelling !== "") clean = clean.split(spelling).join("[redacted]");
  }
  return clean;
}

/**
 * Integers come back as numbers, as SQLite gives them: BIGINT (ids, sums of INTEGER) and NUMERIC
 * (sums of BIGINT). Counts and token sums stay far below 2^53. Set on this pool only, not
 * globally, so another user of `pg` in the process keeps the driver's defaults.
 */
const TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) {
      return (value: string) => Number(value);
    }
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PoolOptions {
  application_name?: string | undefined;
  pool_size?: number | undefined;
}

export function createPool(url: string, options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    application_name: options.application_name ?? "agent-lab",
    max: Math.max(1, Math.floor(options.pool_size ?? 10)),
    types: TYPES,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client the server dropped: the pool discards it, and the next query opens another
  // (and fails with its own error if the server is gone). Without a listener it would crash.
  pool.on("error", () => {});
  return pool;
}

/** A failed connect or migration, as a lab error naming host:port and database, no password. */
export function openError(url: string, error: unknown): DatabaseOpenError {
  const reason = withoutPassword(
    error instanceof Error ? error.message || String(error) : String(error),
    url,
  );
  const code = (error as { code?: unknown }).code;
  return new DatabaseOpenError(
    `cannot open ${describeTarget(url)} (${redactUrl(url)}): ${reason}${typeof code === "string" ? ` (${code})` : ""}`,
  );
}

/** A PostgreSQL refusal as a StorageError naming its reason and SQLSTATE; lab errors pass. */
export function storageError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError) {
    return new StorageError(error.message, error.code ?? null, { cause: error });
  }
  return error;
}
