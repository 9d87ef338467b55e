import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { InvalidInputError } from "../domain/errors.js";
import { isPostgresUrl, redactDatabaseUrl, scrubDatabaseSecrets } from "./database-url.js";
import type { SessionStore } from "./session-store.js";
import { SqliteSessionStore } from "./sqlite/sqlite-session-store.js";

/**
 * One way in for every caller that names a database (CLI, server, bench): a file path is the
 * embedded SQLite store, a `postgres://` or `postgresql://` URL the PostgreSQL store. The
 * PostgreSQL store (and the `pg` driver) is loaded only when a URL asks for it.
 */

export interface OpenStoreOptions {
  /** PostgreSQL: the name the server shows for these connections (pg_stat_activity). */
  application_name?: string;
  /** PostgreSQL: the most connections this store keeps open. */
  pool_size?: number;
  /** SQLite: create the file's folder first (the per-user default location). */
  create_folder?: boolean;
}

/** The PostgreSQL store's face as this module uses it (the class is loaded on demand). */
interface PostgresStoreModule {
  PostgresSessionStore: {
    open(
      url: string,
      options?: { application_name?: string; pool_size?: number },
    ): Promise<SessionStore>;
  };
}

// A variable specifier: TypeScript leaves the module to load at run time, so a SQLite-only user
// never loads `pg` (labExists loads the connection helpers the same way, when it reads a URL).
const POSTGRES_STORE_MODULE = "./postgres/postgres-session-store.js";

async function loadPostgresStore(): Promise<PostgresStoreModule> {
  return (await import(POSTGRES_STORE_MODULE)) as PostgresStoreModule;
}

/** Refused: a database that cannot be opened, named without its password. */
export class DatabaseOpenError extends InvalidInputError {
  constructor(target: string, cause: unknown) {
    const reason = scrubDatabaseSecrets(
      (cause instanceof Error ? cause.message : String(cause)) || "unknown error",
      target,
    );
    // The PostgreSQL store's own open errors already name the database (without the password).
    super(
      /^cannot open /.test(reason)
        ? reason
        : `cannot open the database ${redactDatabaseUrl(target)}: ${reason}`,
    );
  }
}

/**
 * Opens the store `target` names (a SQLite file path, or a PostgreSQL URL), ready to use: the
 * schema is created or migrated. Credentials come only from the URL or the standard PG*
 * variables and ~/.pgpass (the driver reads them); failures name the database without them.
 */
export async function openSessionStore(
  target: string,
  options: OpenStoreOptions = {},
): Promise<SessionStore> {
  if (!isPostgresUrl(target)) {
    if (options.create_folder) mkdirSync(dirname(target), { recursive: true });
    return new SqliteSessionStore(target);
  }
  const { PostgresSessionStore } = await loadPostgresStore();
  try {
    return await PostgresSessionStore.open(target, {
      ...(options.application_name !== undefined
        ? { application_name: options.application_name }
        : {}),
      ...(options.pool_size !== undefined ? { pool_size: options.pool_size } : {}),
    });
  } catch (error) {
    throw new DatabaseOpenError(target, error);
  }
}

/**
 * Whether a lab is there to read: a SQLite file that exists; on PostgreSQL, a database that
 * holds the lab's tables (a database the lab never wrote to is an empty lab, and a read does not
 * create the schema). A server that cannot be reached is an error, not an empty lab.
 */
export async function labExists(target: string): Promise<boolean> {
  if (!isPostgresUrl(target)) return existsSync(target);
  const { default: pg } = await import("pg");
  const { CONNECT_TIMEOUT_MS, openError, trackedSockets, watchConnection, withPasswordFile } =
    await import("./postgres/connection.js");
  const sockets = trackedSockets();
  let client: InstanceType<typeof pg.Client>;
  try {
    // Bounded as the pool's connections are: a server that takes the connection and never
    // answers is an error after the same wait, not a read that hangs.
    client = new pg.Client({
      connectionString: await withPasswordFile(target),
      application_name: "agent-lab",
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      stream: sockets.stream,
    });
  } catch (error) {
    // An unparsable URL: said as the store's open says it, not as a bare "Invalid URL".
    throw new DatabaseOpenError(target, openError(target, error));
  }
  const watch = watchConnection(client);
  try {
    await client.connect();
    const { rows } = await client.query<{ found: string | null }>(
      "SELECT to_regclass('sessions')::text AS found",
    );
    return rows[0]?.found != null;
  } catch (error) {
    // As the store's open names it (host:port and database), and nothing left connected.
    sockets.abandon();
    throw new DatabaseOpenError(target, openError(target, error));
  } finally {
    watch.done();
    await client.end().catch(() => {});
  }
}

/** The store when `labExists`, else null (an empty lab); nothing is created for a read. */
export async function openExistingSessionStore(
  target: string,
  options: Omit<OpenStoreOptions, "create_folder"> = {},
): Promise<SessionStore | null> {
  if (!(await labExists(target))) return null;
  return openSessionStore(target, options);
}
