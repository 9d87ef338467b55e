import Database from "better-sqlite3";
import { AgentLabError, DatabaseOpenError, SchemaTooNewError } from "../../domain/errors.js";
import { migrate } from "./migrate.js";
import { SCHEMA_VERSION } from "./schema.js";

/** Long enough to outwait another process's migration or a burst of writes. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens (creating if missing) a lab database, refusing files that are not SQLite or were written by
 * a newer schema *before* anything is written to them.
 */
export function openDatabase(path: string): Database.Database {
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
    db.pragma("journal_mode = WAL");
    // In WAL mode NORMAL loses at most the last commits on power loss, never consistency.
    db.pragma("synchronous = NORMAL");
    if (version < SCHEMA_VERSION) migrate(db);
    return db;
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
