import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { AgentLabError } from "../domain/errors.js";

function packageVersion(): string {
  const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

export function buildProgram(): Command {
  return new Command("agent-lab")
    .description(
      "A local-first workbench for LLM agents that call tools: run sessions in two tool invocation modes, record every call's tokens and timings in one SQLite file, and compare them.",
    )
    .version(packageVersion(), "-v, --version", "print the agent-lab version")
    .helpOption("-h, --help", "show this help")
    .addHelpText(
      "after",
      '\nThe session store is available as a library today: import { SqliteSessionStore } from "agent-lab".\n' +
        "The serve, chat, run, sessions, usage and export commands are being built.",
    )
    .exitOverride();
}

/** Runs the CLI and returns the exit code; one clear line on failure, never a stack trace. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: "user" });
    if (argv.length === 0) program.outputHelp();
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const message = error instanceof AgentLabError ? error.message : String(error);
    process.stderr.write(`agent-lab: ${message}\n`);
    return 1;
  }
}
