import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { InvalidInputError, SessionNotFoundError } from "../../domain/errors.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import { type CliIo, plural, terminalSafe } from "../output.js";
import { resolveSession } from "../session-id.js";

export function registerDeleteCommand(program: Command, context: CommandContext): void {
  program
    .command("delete")
    .description("Delete a session and all that was recorded with it (asks first, unless --yes).")
    .argument("<session>", "the session id, or a unique prefix of it (see agent-lab sessions)")
    .option("-y, --yes", "delete without asking (needed when stdin is not a terminal)")
    .addHelpText(
      "after",
      `
There is no undo; agent-lab export keeps a copy first.

Examples:
  $ agent-lab delete 3f1c…
  $ agent-lab export 3f1c… --out backup.json && agent-lab delete 3f1c… --yes`,
    )
    .action(async (sessionId: string, flags: { yes?: boolean }, command: Command) => {
      const { io } = context;
      const store = await openStoreForReading(context.database(command));
      if (store === null) throw new SessionNotFoundError(sessionId);
      try {
        const session = await resolveSession(store, sessionId);
        const turns = (await store.listTurns(session.id)).length;
        const what = `session ${session.id} "${session.title}" (${plural(turns, "turn")})`;
        if (!flags.yes) {
          if (io.stdin?.isTTY !== true) {
            throw new InvalidInputError(
              `not deleting ${what} without confirmation: stdin is not a terminal to ask on; pass --yes`,
            );
          }
          if (!(await confirm(io, io.stdin, `Delete ${what}? There is no undo. [y/N] `))) {
            throw new InvalidInputError(`${what} was not deleted`);
          }
        }
        await store.deleteSession(session.id);
        io.stdout.write(`Deleted ${terminalSafe(what)}\n`);
      } finally {
        await store.close();
      }
    });
}

/** Asks on the terminal; only y or yes confirms (Ctrl-C and Ctrl-D say no). */
async function confirm(
  io: CliIo,
  input: NodeJS.ReadableStream,
  question: string,
): Promise<boolean> {
  const output = (io.stderr as Partial<NodeJS.WriteStream>).isTTY ? io.stderr : io.stdout;
  const readline = createInterface({ input, output: output as NodeJS.WriteStream });
  const closed = new Promise<string>((resolve) => readline.once("close", () => resolve("")));
  readline.once("SIGINT", () => readline.close());
  try {
    const answer = await Promise.race([readline.question(question), closed]);
    return /^(y|yes)$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    readline.close();
  }
}
