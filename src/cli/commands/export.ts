import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { InvalidInputError, SessionNotFoundError } from "../../domain/errors.js";
import type { SessionExport } from "../../domain/session-export.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import { fileErrorReason } from "../files.js";
import { plural } from "../output.js";
import { resolveSession } from "../session-id.js";

interface ExportFlags {
  out?: string;
  force?: boolean;
}

export function registerExportCommand(program: Command, context: CommandContext): void {
  program
    .command("export")
    .description(
      "Write a session (config, turns, messages, audit log, usage) as one JSON document for agent-lab import.",
    )
    .argument("<session>", "the session id, or a unique prefix of it (see agent-lab sessions)")
    .option("--out <file>", "write the document to FILE instead of stdout")
    .option("--force", "with --out: overwrite FILE when it exists")
    .addHelpText(
      "after",
      `
The document is { format: "agent-lab.session", version: 2, exported_at, session, turns, messages,
audit, usage }, the records exactly as the store keeps them.

Examples:
  $ agent-lab export 3f1c… --out flaky-tests.json
  $ agent-lab export 3f1c… | jq '.usage.session.total_tokens'
  $ agent-lab export 3f1c… | agent-lab --db other.sqlite3 import -`,
    )
    .action(async (sessionId: string, flags: ExportFlags, command: Command) => {
      const store = await openStoreForReading(context.database(command));
      if (store === null) throw new SessionNotFoundError(sessionId);
      let document: SessionExport;
      try {
        document = await store.exportSession((await resolveSession(store, sessionId)).id);
      } finally {
        await store.close();
      }
      const text = `${JSON.stringify(document, null, 2)}\n`;
      const { io } = context;
      if (flags.out === undefined) {
        io.stdout.write(text);
        return;
      }
      try {
        // "wx" refuses an existing file in the same step that creates it.
        writeFileSync(flags.out, text, { flag: flags.force ? "w" : "wx" });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EEXIST") {
          throw new InvalidInputError(`${flags.out} already exists; pass --force to overwrite it`);
        }
        throw new InvalidInputError(`cannot write ${flags.out}: ${fileErrorReason(error)}`);
      }
      const turns = document.turns.length;
      io.stdout.write(
        `Exported session ${document.session.id} (${plural(turns, "turn")}, ${plural(document.messages.length, "message")}) to ${flags.out}\n`,
      );
    });
}
