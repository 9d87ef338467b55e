import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { InvalidInputError, SessionExistsError } from "../../domain/errors.js";
import {
  SESSION_EXPORT_FORMAT,
  SESSION_EXPORT_VERSION,
  SessionExportDocument,
} from "../../domain/session-export.js";
import { parseInput } from "../../domain/validation.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForWriting } from "../database-path.js";
import { fileErrorReason, readStreamText } from "../files.js";
import { terminalSafe, writeJson } from "../output.js";

interface ImportFlags {
  sessionId?: string;
  json?: boolean;
}

export function registerImportCommand(program: Command, context: CommandContext): void {
  program
    .command("import")
    .description("Store a session from a document written by agent-lab export, and print its id.")
    .argument("<file>", "the export document, or - to read it from stdin")
    .option("--session-id <id>", "the imported session's id (default: the one in the document)")
    .option("--json", "print { session_id }")
    .addHelpText(
      "after",
      `
The document is checked whole before anything is stored: a bad one is refused with the field named.
An id already in the lab is refused; pick another with --session-id.

Examples:
  $ agent-lab import flaky-tests.json
  $ agent-lab import flaky-tests.json --session-id flaky-tests-copy
  $ agent-lab --db old.sqlite3 export 3f1c… | agent-lab import -`,
    )
    .action(async (file: string, flags: ImportFlags, command: Command) => {
      const { io } = context;
      const source = file === "-" ? "stdin" : file;
      const text = await readSource(file, context);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new InvalidInputError(`${source}: not valid JSON (${(error as Error).message})`);
      }
      checkFormat(value, source);
      // Checked before the database is opened: a bad document leaves no new file behind.
      const document = parseInput(SessionExportDocument, value, source);
      const store = await openStoreForWriting(context.database(command));
      let sessionId: string;
      try {
        sessionId = await store.importSession(document, {
          ...(flags.sessionId !== undefined ? { session_id: flags.sessionId } : {}),
        });
      } catch (error) {
        if (error instanceof SessionExistsError) {
          throw new InvalidInputError(
            `${error.message}; pass --session-id to import ${source} under another id`,
            { cause: error },
          );
        }
        throw error;
      } finally {
        await store.close();
      }
      if (flags.json) writeJson(io, { session_id: sessionId });
      // The id may come from the imported document.
      else io.stdout.write(`${terminalSafe(sessionId)}\n`);
    });
}

async function readSource(file: string, context: CommandContext): Promise<string> {
  if (file === "-") {
    const stdin = context.io.stdin;
    if (stdin === undefined) throw new InvalidInputError("import -: there is no stdin to read");
    return readStreamText(stdin);
  }
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new InvalidInputError(`${file}: ${fileErrorReason(error)}`);
  }
}

/** Any other JSON file gets one clear line, not every field it lacks. */
function checkFormat(value: unknown, source: string): void {
  const format =
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>).format
      : undefined;
  if (format === SESSION_EXPORT_FORMAT) {
    const { version } = value as Record<string, unknown>;
    if (typeof version === "number" && version > SESSION_EXPORT_VERSION) {
      throw new InvalidInputError(
        `${source}: version: ${version} was written by a newer agent-lab (this one reads versions up to ${SESSION_EXPORT_VERSION}); upgrade agent-lab to import it`,
      );
    }
    return;
  }
  const found = format === undefined ? "missing" : JSON.stringify(format);
  throw new InvalidInputError(
    `${source}: format: expected "${SESSION_EXPORT_FORMAT}", found ${found}; not a session written by agent-lab export`,
  );
}
