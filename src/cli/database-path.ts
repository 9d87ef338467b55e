import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

export const DATABASE_ENV = "AGENT_LAB_DB";

export interface DatabaseLocation {
  path: string;
  /** True when neither `--db` nor $AGENT_LAB_DB named the file: its folder is ours to create. */
  is_default: boolean;
}

/**
 * The lab's SQLite file: `--db`, else $AGENT_LAB_DB, else the per-user data folder
 * (`$XDG_DATA_HOME/agent-lab/lab.sqlite3`, or `~/.local/share/agent-lab/lab.sqlite3`).
 */
export function resolveDatabasePath(
  option: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): DatabaseLocation {
  if (option) return { path: option, is_default: false };
  const fromEnvironment = env[DATABASE_ENV]?.trim();
  if (fromEnvironment) return { path: fromEnvironment, is_default: false };
  // The XDG spec says a relative value is invalid and must be ignored.
  const xdg = env.XDG_DATA_HOME?.trim();
  const dataHome =
    xdg && isAbsolute(xdg) ? xdg : join(env.HOME?.trim() || homedir(), ".local", "share");
  return { path: join(dataHome, "agent-lab", "lab.sqlite3"), is_default: true };
}

/**
 * Opens the store for writing, creating the default folder on first use. `notes` (a command's
 * stderr) hears what the user must know about the file: an in-memory database keeps nothing; a
 * file system without WAL.
 */
export function openStoreForWriting(
  location: DatabaseLocation,
  notes?: { write(text: string): unknown },
): SqliteSessionStore {
  if (location.is_default) mkdirSync(dirname(location.path), { recursive: true });
  const store = new SqliteSessionStore(location.path);
  if (!store.persistent) {
    notes?.write(
      `agent-lab: note: the database ${JSON.stringify(location.path)} is in memory: nothing is kept once this command ends\n`,
    );
  } else if (store.journal_mode !== "wal") {
    notes?.write(
      `agent-lab: note: ${location.path} cannot use WAL on this file system; using a rollback journal (safe, but slower, and readers wait for writers)\n`,
    );
  }
  return store;
}

/**
 * Opens the store for reading; a file that does not exist yet is an empty lab (null), not a file to
 * create, so a mistyped `--db` does not leave files behind.
 */
export function openStoreForReading(location: DatabaseLocation): SqliteSessionStore | null {
  if (!existsSync(location.path)) return null;
  return new SqliteSessionStore(location.path);
}
