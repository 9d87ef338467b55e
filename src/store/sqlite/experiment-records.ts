import type Database from "better-sqlite3";
import type { ExperimentRecords } from "../experiment-records.js";

/** An experiment's runs and their rows, in a fixed number of queries (see ExperimentRecords). */
export function readExperimentRecords(
  _db: Database.Database,
  _experimentId: string,
): ExperimentRecords {
  throw new Error("experimentRecords: not built yet");
}
