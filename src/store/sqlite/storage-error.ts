import Database from "better-sqlite3";
import { AgentLabError, StorageError } from "../../domain/errors.js";

/** SQLite's own refusals become lab errors naming its reason; the lab's pass through. */
function storageError(error: unknown): unknown {
  if (error instanceof AgentLabError || !(error instanceof Database.SqliteError)) return error;
  return new StorageError(error.message, error.code, { cause: error });
}

/** Runs a write, turning a database refusal (disk full, I/O error…) into a StorageError. */
export function write<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw storageError(error);
  }
}
