import type { Command } from "commander";
import type { SessionListItem } from "../../domain/records.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import { formatCount, formatTable, formatTimestamp, truncate, writeJson } from "../output.js";

export function registerSessionsCommand(program: Command, context: CommandContext): void {
  program
    .command("sessions")
    .description("List the sessions in the lab's database, most recently updated first.")
    .option("--json", "print the session records as a JSON array")
    .addHelpText(
      "after",
      `
Examples:
  $ agent-lab sessions
  $ agent-lab sessions --json | jq -r '.[0].id'`,
    )
    .action((flags: { json?: boolean }, command: Command) => {
      const location = context.database(command);
      const store = openStoreForReading(location);
      let sessions: SessionListItem[] = [];
      try {
        sessions = store?.listSessions() ?? [];
      } finally {
        store?.close();
      }
      const { io } = context;
      if (flags.json) {
        writeJson(io, sessions);
        return;
      }
      if (sessions.length === 0) {
        io.stdout.write(
          `No sessions yet in ${location.path}. Start one with: agent-lab run "search for agent lab"\n`,
        );
        return;
      }
      io.stdout.write(
        `${formatTable(sessions, [
          { header: "ID", value: (session) => session.id },
          { header: "TITLE", value: (session) => truncate(session.title, 40) },
          { header: "TURNS", value: (session) => String(session.turn_count), align: "right" },
          {
            header: "TOKENS",
            value: (session) => formatCount(session.total_tokens),
            align: "right",
          },
          { header: "UPDATED (UTC)", value: (session) => formatTimestamp(session.updated_at) },
        ])}\n`,
      );
    });
}
