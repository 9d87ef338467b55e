import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { InvalidInputError } from "../domain/errors.js";
import type { SessionStore } from "./session-store.js";
import { SqliteSessionStore } from "./sqlite/sqlite-session-store.js";

/**
 * One way in for every caller that names a database (CLI, server, bench): a file path is the
 * embedded SQLite store, a `postgres://` or `postgresql://` URL the PostgreSQL store. The
 * PostgreSQL store (and the `pg` driver) is loaded only when a URL asks for it.
 */

export function isPostgresUrl(target: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(target.trim());
}

const REDACTED = "***";

/**
 * The URL as it may be shown: the password (in the user info or a `password=` parameter) is
 * replaced by ***. A path is returned as given. Every printed or logged database name goes
 * through here: a password is a secret like an API key.
 */
export function redactDatabaseUrl(target: string): string {
  if (!isPostgresUrl(target)) return target;
  const schemeEnd = target.indexOf("://") + 3;
  // The user info ends at the last "@" before the path/query: an unencoded "@" in a password
  // must not leave the rest of it shown.
  const queryStart = target.indexOf("?", schemeEnd);
  const authorityAndPath =
    queryStart === -1 ? target.slice(schemeEnd) : target.slice(schemeEnd, queryStart);
  const at = authorityAndPath.lastIndexOf("@");
  let head = target.slice(0, schemeEnd);
  let rest = authorityAndPath;
  if (at !== -1) {
    const userInfo = authorityAndPath.slice(0, at);
    const colon = userInfo.indexOf(":");
    head += colon === -1 ? `${userInfo}@` : `${userInfo.slice(0, colon)}:${REDACTED}@`;
    rest = authorityAndPath.slice(at + 1);
  }
  const query =
    queryStart === -1
      ? ""
      : target
          .slice(queryStart)
          .replace(/([?&]password=)[^&#]*/gi, `$1${REDACTED}`)
          .replace(/([?&]sslpassword=)[^&#]*/gi, `$1${REDACTED}`);
  return `${head}${rest}${query}`;
}

/** The secrets a URL carries (its password, decoded and as written), to scrub from messages. */
function secretsOf(target: string): string[] {
  if (!isPostgresUrl(target)) return [];
  const secrets = new Set<string>();
  const shown = redactDatabaseUrl(target);
  // Whatever redaction removed is secret, whichever way it was written.
  const match = /^[^:]+:\/\/[^:@/]*:(.*)@/.exec(target.split("?")[0] ?? "");
  if (match?.[1]) secrets.add(match[1]);
  for (const [, value] of target.matchAll(/[?&](?:ssl)?password=([^&#]*)/gi)) {
    if (value) secrets.add(value);
  }
  for (const secret of [...secrets]) {
    try {
      secrets.add(decodeURIComponent(secret));
    } catch {}
  }
  return [...secrets].filter((secret) => secret.length > 0 && !shown.includes(secret));
}

/** A message with every secret of the URL replaced by ***. */
export function scrubDatabaseSecrets(message: string, target: string): string {
  let scrubbed = message;
  for (const secret of secretsOf(target)) scrubbed = scrubbed.split(secret).join(REDACTED);
  return scrubbed;
}

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
// never loads `pg`, and this file does not depend on the PostgreSQL store's internals.
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
  const client = new pg.Client({ connectionString: target, application_name: "agent-lab" });
  try {
    await client.connect();
    const { rows } = await client.query<{ found: string | null }>(
      "SELECT to_regclass('sessions')::text AS found",
    );
    return rows[0]?.found != null;
  } catch (error) {
    throw new DatabaseOpenError(target, error);
  } finally {
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
