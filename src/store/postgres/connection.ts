import { Socket } from "node:net";
import { userInfo } from "node:os";
import pg from "pg";
import pgPass from "pgpass";
import { isLostConnection } from "../../domain/database-away.js";
import { AgentLabError, DatabaseOpenError, StorageError } from "../../domain/errors.js";
import { redactDatabaseUrl, scrubDatabaseSecrets } from "../database-url.js";

/**
 * The `pg` pool of a store, and its errors: a URL carries its password, a secret like an API key,
 * so an error names the URL redacted and a driver's message is scrubbed (database-url.ts).
 */

/**
 * Where a URL points, for an error: host:port and the database, nothing else. What the URL leaves
 * out is what the driver takes then (a `host` parameter, PGHOST, PGPORT, PGDATABASE), so the
 * error names the server that refused, not a default nobody asked.
 */
export function describeTarget(url: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    const parsed = new URL(url);
    const database =
      decodeURIComponent(parsed.pathname.replace(/^\//, "")) || env.PGDATABASE || "(default)";
    const host =
      decodeURIComponent(parsed.hostname) ||
      parsed.searchParams.get("host") ||
      env.PGHOST ||
      "localhost";
    return `database ${database} on ${host}:${parsed.port || env.PGPORT || "5432"}`;
  } catch {
    return "a database at an unparsable URL";
  }
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

/** A pool's sockets, for `abandonConnections`. */
const poolSockets = new WeakMap<pg.Pool, TrackedSockets>();

export interface TrackedSockets {
  /** pg's `stream` option: each connection's socket, remembered until it closes. */
  stream: () => Socket;
  /** Closes every socket still open. */
  abandon(): void;
}

/**
 * The sockets of a pool or a one-off client, so a failed open leaves none behind: a connection
 * refused during its start (no password for a server that asks for one) is not closed by the
 * driver, and its socket stayed open until the server's own timeout (60 s), holding the CLI's exit.
 */
export function trackedSockets(): TrackedSockets {
  const sockets = new Set<Socket>();
  return {
    stream: () => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      return socket;
    },
    abandon: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Closes every socket the pool opened: after a failed open, nothing lingers. */
export function abandonConnections(pool: pg.Pool): void {
  poolSockets.get(pool)?.abandon();
}

/**
 * The URL with the password ~/.pgpass (or $PGPASSFILE) gives, when neither the URL nor $PGPASSWORD
 * has one, as libpq reads them. pg can read the file itself, but prints a deprecation warning on
 * every connection that does: every command of a lab whose password lives there printed one. The
 * URL made here goes only to the driver; everything shown names the URL as given.
 */
export async function withPasswordFile(url: string): Promise<string> {
  if (process.env.PGPASSWORD !== undefined) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.password !== "" || /[?&](?:ssl)?password=/i.test(parsed.search)) return url;
  const user = decodeURIComponent(parsed.username) || process.env.PGUSER || userInfo().username;
  const connection = {
    host: decodeURIComponent(parsed.hostname) || process.env.PGHOST || "localhost",
    port: parsed.port || process.env.PGPORT || "5432",
    database: decodeURIComponent(parsed.pathname.slice(1)) || process.env.PGDATABASE || user,
    user,
  };
  const password = await new Promise<string | undefined>((resolve) => pgPass(connection, resolve));
  if (password === undefined) return url;
  if (parsed.username === "") parsed.username = encodeURIComponent(user);
  parsed.password = encodeURIComponent(password);
  return parsed.href;
}

export function createPool(url: string, options: PoolOptions): pg.Pool {
  const sockets = trackedSockets();
  const pool = new pg.Pool({
    connectionString: url,
    application_name: options.application_name ?? "agent-lab",
    max: Math.max(1, Math.floor(options.pool_size ?? 10)),
    types: TYPES,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    stream: sockets.stream,
  });
  poolSockets.set(pool, sockets);
  // An idle client the server dropped: the pool discards it, and the next query opens another
  // (and fails with its own error if the server is gone). Without a listener it would crash.
  pool.on("error", () => {});
  return pool;
}

/** How long any connection attempt may take before it fails (the pool's, a one-off client's). */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A connection checked out of the pool (or a one-off client) while the lab holds it: one the
 * server drops between two of its queries emits `error`, which would crash the process without a
 * listener (a restart, `pg_terminate_backend`). The next query on it then fails, as a refusal the
 * caller reports; `lost()` says whether it broke, so it is not handed back to the pool.
 */
export function watchConnection(client: pg.ClientBase): {
  lost(): Error | undefined;
  done(): void;
} {
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on("error", onError);
  return {
    lost: () => lost,
    done: () => {
      client.off("error", onError);
    },
  };
}

/** The driver's words when the server asks for a password and it has none to give. */
const NO_PASSWORD = /client password must be a (?:non-empty )?string/;

/** A failed connect or migration, as a lab error naming host:port and database, no password. */
export function openError(url: string, error: unknown): DatabaseOpenError {
  const message = error instanceof Error ? error.message || String(error) : String(error);
  const unparsable = (error as { code?: unknown }).code === "ERR_INVALID_URL";
  const reason = NO_PASSWORD.test(message)
    ? "the server asks for a password and none was given: put it in the URL, in $PGPASSWORD or in ~/.pgpass"
    : unparsable
      ? `${scrubDatabaseSecrets(message, url)} (if a user name or password holds #, /, ?, @ or %, percent-encode it, # as %23, or give the password in $PGPASSWORD or ~/.pgpass)`
      : scrubDatabaseSecrets(message, url);
  const code = (error as { code?: unknown }).code;
  return new DatabaseOpenError(
    `cannot open ${describeTarget(url)} (${redactDatabaseUrl(url)}): ${reason}${typeof code === "string" ? ` (${code})` : ""}`,
  );
}

/**
 * A PostgreSQL refusal as a StorageError naming its reason and SQLSTATE, and so is a connection
 * that broke (see isLostConnection); lab errors pass.
 */
export function storageError(error: unknown): unknown {
  // Already one (a read inside a transaction): wrapped again, its message said it twice.
  if (error instanceof AgentLabError) return error;
  if (error instanceof pg.DatabaseError) {
    return new StorageError(error.message, error.code ?? null, { cause: error });
  }
  if (error instanceof Error && isLostConnection(error)) {
    return new StorageError(
      error.message,
      null,
      { cause: error },
      "the connection to the database failed",
    );
  }
  return error;
}
