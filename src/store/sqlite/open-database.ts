import Database from "better-sqlite3";
import { AgentLabError, DatabaseOpenError, SchemaTooNewError } from "../../domain/errors.js";
import { migrate } from "./migrate.js";
import { SCHEMA_VERSION } from "./schema.js";

/** Long enough to outwait another process's migration or a burst of writes. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * What the -wal file is cut back to once a checkpoint has copied it into the database: the size
 * the default auto-checkpoint (1,000 pages of 4 KiB) lets it reach, so it only grows past this
 * while another connection holds a long read, and shrinks back at the next write after it ends.
 */
export const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

export interface OpenedDatabase {
  db: Database.Database;
  /** False for an in-memory (or temporary) database, which keeps nothing once closed. */
  persistent: boolean;
  /** "wal"; "delete" where the file system cannot share WAL memory; "memory" when not persistent. */
  journal_mode: string;
}

/** SQLite's names for a database that lives only as long as its connection. */
const isTransient = (path: string) => path === "" || path === ":memory:";

/**
 * WAL with synchronous=NORMAL: a crash of the process loses nothing committed, and a power loss
 * may lose the last commits but never corrupts the file; FULL would fsync every append (a turn
 * writes dozens of rows) for that last margin. Where WAL cannot be enabled (some network file
 * systems), the rollback journal with synchronous=FULL, which is as safe; journal modes that lose
 * data on a crash (OFF, MEMORY) are never used on a file.
 */
function settleJournal(db: Database.Database, path: string): string {
  const wal = String(db.pragma("journal_mode = WAL", { simple: true })).toLowerCase();
  if (wal === "wal") {
    db.pragma("synchronous = NORMAL");
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
    return wal;
  }
  const rollback = String(db.pragma("journal_mode = DELETE", { simple: true })).toLowerCase();
  if (rollback !== "delete") {
    throw new DatabaseOpenError(
      `cannot open database ${path}: SQLite refuses both WAL and a rollback journal here (it stays in journal mode ${rollback}, which can lose data in a crash)`,
    );
  }
  db.pragma("synchronous = FULL");
  return rollback;
}

/**
 * Opens (creating if missing) a lab database, refusing files that are not SQLite or were written by
 * a newer schema *before* anything is written to them. SQLite answers "database is locked" without
 * waiting in a few cases its busy handler does not cover (a journal-mode switch while other
 * openers hold the file, a lock upgrade it refuses to avoid a deadlock): several processes opening
 * one legacy file at once meet them, so the whole open is tried again until the busy timeout.
 */
export function openDatabase(path: string): OpenedDatabase {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return openOnce(path);
    } catch (error) {
      const busy = (error as { cause?: { code?: unknown } }).cause?.code;
      if ((busy !== "SQLITE_BUSY" && busy !== "SQLITE_LOCKED") || Date.now() > deadline)
        throw error;
      // A synchronous pause (the open is synchronous): short, growing, with jitter.
      const pauseMs = Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random());
      Atomics.wait(PAUSE, 0, 0, pauseMs);
    }
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function openOnce(path: string): OpenedDatabase {
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw new DatabaseOpenError(`cannot open database ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new SchemaTooNewError(path, version, SCHEMA_VERSION);
    const persistent = !isTransient(path);
    const journal_mode = persistent ? settleJournal(db, path) : "memory";
    if (version < SCHEMA_VERSION) migrate(db);
    return { db, persistent, journal_mode };
  } catch (error) {
    db.close();
    if (error instanceof AgentLabError) throw error;
    const code = (error as { code?: string }).code;
    if (code === "SQLITE_NOTADB") {
      throw new DatabaseOpenError(`${path} is not an agent-lab database: it is not a SQLite file`, {
        cause: error,
      });
    }
    throw new DatabaseOpenError(`cannot open database ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
