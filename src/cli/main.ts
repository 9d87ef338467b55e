import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { startTelemetry, type TelemetryHandle } from "../telemetry/start-telemetry.js";
import { type CommandContext, createCommandContext } from "./command-context.js";
import { commandsFor, type RegisterCommand } from "./command-modules.js";
import { type CliIo, processIo, writeError } from "./output.js";

/** Read once per process: the program's `--version` and the telemetry's resource both need it. */
let version: string | undefined;

function packageVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    }
  ).version;
  return version;
}

/** The program with these commands (`commandsFor`: the one asked for, or all). */
export function buildProgram(
  context: CommandContext,
  commands: readonly RegisterCommand[],
): Command {
  const { io } = context;
  const program = new Command("agent-lab")
    .description(
      "A local-first workbench for LLM agents that call tools: run sessions in two tool invocation modes, record every call's tokens and timings in one SQLite file (or a PostgreSQL database), and compare them.",
    )
    .version(packageVersion(), "-v, --version", "print the agent-lab version")
    .helpOption("-h, --help", "show this help")
    .option(
      "--db <path|url>",
      "the lab's database: a SQLite file or a postgres://user@host/db URL (default: $AGENT_LAB_DB, else $XDG_DATA_HOME/agent-lab/lab.sqlite3 or ~/.local/share/agent-lab/lab.sqlite3)",
    )
    .option(
      "--lab-config <file>",
      "the lab config file with MCP servers and HTTP tools (default: $AGENT_LAB_CONFIG, else agent-lab.yaml next to the database, when present)",
    )
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Usage errors read like every other failure: one line, "agent-lab: …".
      outputError: (text, write) => write(`agent-lab: ${text.replace(/^error: /, "")}`),
    })
    .helpCommand("help [command]", "show the help of a command")
    .addHelpText(
      "after",
      `
Every command takes --db and --help. Without a model the lab runs on its simulated model (no
network, labelled "simulated"); --model openai:MODEL talks to any OpenAI-compatible endpoint, with
the key read from $OPENAI_API_KEY. The session store is also a library:
import { SqliteSessionStore } from "agent-lab".

Examples:
  $ agent-lab run "search for agent lab and file a ticket about flaky tests"
  $ agent-lab chat
  $ agent-lab sessions
  $ agent-lab usage <session-id>
  $ agent-lab call <session-id> chat:1:1
  $ agent-lab show <session-id> --json
  $ agent-lab export <session-id> --out session.json
  $ agent-lab import session.json --session-id copy-1
  $ agent-lab delete <session-id> --yes
  $ agent-lab suite import bfcl bfcl_eval/data --out bfcl.yaml
  $ agent-lab serve
  $ agent-lab --db postgres://lab@db.example/lab sessions
  $ agent-lab db copy --from lab.sqlite3 --to postgres://lab@db.example/lab`,
    )
    .exitOverride();
  // Subcommands copy the settings above (exit override, output) when they are created.
  for (const register of commands) register(program, context, packageVersion());
  return program;
}

/** Runs the CLI and returns the exit code; one clear line on failure, never a stack trace. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const context = createCommandContext(io);
  // Piped into `head`: a closed stdout is the reader's choice, not a failure with a stack trace.
  if (io.stdout === process.stdout) process.stdout.on("error", () => {});
  const program = buildProgram(context, await commandsFor(argv));
  // Every turn this command runs goes to the OTLP collector the environment names, if any;
  // export-otel runs no turn and sends its own spans (and says itself what is wrong with the
  // variables: a warning here said it twice).
  const live: { telemetry: TelemetryHandle | null } = { telemetry: null };
  program.hook("preAction", async (_program, command) => {
    if (command.name() === "export-otel") return;
    live.telemetry = await startTelemetry(io.env, {
      version: packageVersion(),
      warn: (line) => io.stderr.write(line),
    });
  });
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync([...argv], { from: "user" });
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    // AgentLabError messages are written for people; any other error still gets only its message.
    writeError(io, error instanceof Error ? error.message : String(error));
    return 1;
  } finally {
    await live.telemetry?.shutdown();
  }
}
