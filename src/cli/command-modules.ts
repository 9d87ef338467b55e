import type { Command } from "commander";
import type { CommandContext } from "./command-context.js";

/** Adds one command (and its subcommands) to the program. */
export type RegisterCommand = (program: Command, context: CommandContext, version: string) => void;

/**
 * Every command's module, in the order `--help` lists them, loaded only when needed: a command
 * loads its own module, not the other eighteen. `agent-lab sessions` imported 208 of the lab's
 * modules (yaml, ajv and the SSE parser with them) where it needs 58, and a process starts for
 * every CLI command a user or a test runs.
 */
const COMMANDS: Readonly<Record<string, () => Promise<RegisterCommand>>> = {
  run: async () => (await import("./commands/run.js")).registerRunCommand,
  chat: async () => (await import("./commands/chat.js")).registerChatCommand,
  sessions: async () => (await import("./commands/sessions.js")).registerSessionsCommand,
  usage: async () => (await import("./commands/usage.js")).registerUsageCommand,
  call: async () => (await import("./commands/call.js")).registerCallCommand,
  show: async () => (await import("./commands/show.js")).registerShowCommand,
  export: async () => (await import("./commands/export.js")).registerExportCommand,
  "export-otel": async () => (await import("./commands/export-otel.js")).registerExportOtelCommand,
  import: async () => (await import("./commands/import.js")).registerImportCommand,
  delete: async () => (await import("./commands/delete.js")).registerDeleteCommand,
  fork: async () => (await import("./commands/fork.js")).registerForkCommand,
  replay: async () => (await import("./commands/replay.js")).registerReplayCommand,
  retry: async () => (await import("./commands/retry.js")).registerRetryCommand,
  serve: async () => (await import("./commands/serve.js")).registerServeCommand,
  bench: async () => (await import("./commands/bench.js")).registerBenchCommand,
  worker: async () => (await import("./commands/worker.js")).registerWorkerCommand,
  suite: async () => (await import("./commands/suite.js")).registerSuiteCommand,
  tools: async () => (await import("./commands/tools.js")).registerToolsCommand,
  db: async () => (await import("./commands/db.js")).registerDbCommand,
};

/**
 * The program's options that take a value (`--db x`): the word after them is no command. Kept
 * equal to main.ts's options by a test (command-modules.test.ts).
 */
export const VALUE_OPTIONS: ReadonlySet<string> = new Set(["--db", "--lab-config"]);

/** Options that answer for the whole program (its help, its version): every command is listed. */
const PROGRAM_ANSWERS = new Set(["-h", "--help", "-v", "--version"]);

/**
 * The commands to register for these arguments: the one they name, or all of them when they name
 * none the lab has (help, a typo commander suggests a name for, no command at all) or ask for
 * the program's own help or version before naming one.
 */
export async function commandsFor(argv: readonly string[]): Promise<RegisterCommand[]> {
  const named = commandNameOf(argv);
  const load = named !== null && Object.hasOwn(COMMANDS, named) ? COMMANDS[named] : undefined;
  if (load !== undefined) return [await load()];
  return Promise.all(Object.values(COMMANDS).map((loadOne) => loadOne()));
}

function commandNameOf(argv: readonly string[]): string | null {
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] as string;
    if (word === "--" || PROGRAM_ANSWERS.has(word)) return null;
    if (VALUE_OPTIONS.has(word)) index++;
    else if (!word.startsWith("-")) return word;
  }
  return null;
}
