import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { pendingTurnEnds, settleTurnEnds } from "../runtime/turn-failure.js";
import { isPostgresUrl, redactDatabaseUrl, refuseUriName } from "../store/database-url.js";
import { openExistingSessionStore, openSessionStore } from "../store/open-store.js";
import type { SessionStore } from "../store/session-store.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

export const DATABASE_ENV = "AGENT_LAB_DB";

export interface DatabaseLocation {
  /** A SQLite file's path, or a PostgreSQL URL (postgres://… or postgresql://…). */
  path: string;
  /** True when neither `--db` nor $AGENT_LAB_DB named the file: its folder is ours to create. */
  is_default: boolean;
  /** How to show it: the path, or the URL without its password. */
  label: string;
  /** True for a PostgreSQL URL. */
  is_postgres: boolean;
}

/** The name as given, once it is no URI other than a PostgreSQL URL (see refuseUriName). */
function notUri(source: string, name: string): string {
  refuseUriName(source, name);
  return name;
}

function locationOf(path: string, is_default: boolean): DatabaseLocation {
  return { path, is_default, label: redactDatabaseUrl(path), is_postgres: isPostgresUrl(path) };
}

/**
 * The lab's database: `--db`, else $AGENT_LAB_DB, else the per-user data folder
 * (`$XDG_DATA_HOME/agent-lab/lab.sqlite3`, or `~/.local/share/agent-lab/lab.sqlite3`). Either
 * names a SQLite file or a PostgreSQL URL.
 */
export function resolveDatabasePath(
  option: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): DatabaseLocation {
  if (option) return locationOf(notUri("--db", option), false);
  const fromEnvironment = env[DATABASE_ENV]?.trim();
  if (fromEnvironment) return locationOf(notUri(`$${DATABASE_ENV}`, fromEnvironment), false);
  // The XDG spec says a relative value is invalid and must be ignored.
  const xdg = env.XDG_DATA_HOME?.trim();
  const dataHome =
    xdg && isAbsolute(xdg) ? xdg : join(env.HOME?.trim() || homedir(), ".local", "share");
  return locationOf(join(dataHome, "agent-lab", "lab.sqlite3"), true);
}

/**
 * Opens the store for writing, creating the default folder (SQLite) or the schema (PostgreSQL) on
 * first use. `notes` (a command's stderr) hears what the user must know about a SQLite file: an
 * in-memory database keeps nothing; a file system without WAL.
 */
export async function openStoreForWriting(
  location: DatabaseLocation,
  notes?: { write(text: string): unknown },
): Promise<SessionStore> {
  const store = await openSessionStore(location.path, {
    create_folder: location.is_default,
    application_name: "agent-lab",
  });
  if (!store.persistent) {
    notes?.write(
      `agent-lab: note: the database ${JSON.stringify(location.label)} is in memory: nothing is kept once this command ends\n`,
    );
  } else if (store instanceof SqliteSessionStore && store.journal_mode !== "wal") {
    notes?.write(
      `agent-lab: note: ${location.label} cannot use WAL on this file system; using a rollback journal (safe, but slower, and readers wait for writers)\n`,
    );
  }
  // A turn that failed because the database refused it is ended in the background, once the
  // database takes it. A command waits for that before it closes the store, else the turn it
  // printed as failed would stay running there (the session locked until its lease lapses).
  const close = store.close.bind(store);
  store.close = async () => {
    if (pendingTurnEnds() > 0) {
      notes?.write(
        `agent-lab: note: the database has not taken a failed turn's end yet; retrying for up to ${TURN_END_WAIT_MS / 1000} s (Ctrl-C leaves it: the turn then shows as interrupted)\n`,
      );
      if (!(await settleTurnEnds(TURN_END_WAIT_MS))) {
        notes?.write(
          "agent-lab: note: the database did not take it; the turn will show as interrupted\n",
        );
      }
    }
    return close();
  };
  return store;
}

/** How long a command waits for the database to take a failed turn's end before it closes. */
const TURN_END_WAIT_MS = 30_000;

/**
 * Opens the store for reading; a file that does not exist yet, or a PostgreSQL database without
 * the lab's tables, is an empty lab (null), not a database to create, so a mistyped `--db` does
 * not leave files or tables behind.
 */
export function openStoreForReading(location: DatabaseLocation): Promise<SessionStore | null> {
  return openExistingSessionStore(location.path, { application_name: "agent-lab" });
}
