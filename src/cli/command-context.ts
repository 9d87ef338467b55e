import type { Command } from "commander";
import {
  createLabProvidersFor,
  type LabProvidersWithConfig,
} from "../composition/lab-providers.js";
import { type DatabaseLocation, resolveDatabasePath } from "./database-path.js";
import type { CliIo } from "./output.js";

/** What every command gets from the program: its streams and environment, and the lab's file. */
export interface CommandContext {
  io: CliIo;
  /** The database named by the global `--db`, $AGENT_LAB_DB or the per-user default. */
  database(command: Command): DatabaseLocation;
  /**
   * The models and tools of a command, with the sources of the lab config file (`--lab-config`,
   * $AGENT_LAB_CONFIG, or agent-lab.yaml beside the database). The caller closes its tools.
   */
  providers(command: Command): LabProvidersWithConfig;
  /** A command's exit code (0 unless set). */
  exitCode: number;
}

export function createCommandContext(io: CliIo): CommandContext {
  return {
    io,
    database(command) {
      const { db } = command.optsWithGlobals<{ db?: string }>();
      return resolveDatabasePath(db, io.env);
    },
    providers(command) {
      const { labConfig } = command.optsWithGlobals<{ labConfig?: string }>();
      const database = this.database(command);
      // A server database has no folder to hold an agent-lab.yaml beside it.
      const databasePath = database.is_postgres ? undefined : database.path;
      return createLabProvidersFor(
        { flag: labConfig, env: io.env, database_path: databasePath },
        { model_dependencies: { env: io.env } },
      );
    },
    exitCode: 0,
  };
}
