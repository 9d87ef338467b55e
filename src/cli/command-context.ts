import type { Command } from "commander";
import { type DatabaseLocation, resolveDatabasePath } from "./database-path.js";
import type { CliIo } from "./output.js";

/** What every command gets from the program: its streams and environment, and the lab's file. */
export interface CommandContext {
  io: CliIo;
  /** The database named by the global `--db`, $AGENT_LAB_DB or the per-user default. */
  database(command: Command): DatabaseLocation;
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
    exitCode: 0,
  };
}
