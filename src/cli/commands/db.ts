import type { Command } from "commander";
import { z } from "zod";
import { parseInput } from "../../domain/validation.js";
import { redactDatabaseUrl } from "../../store/database-url.js";
import type { CommandContext } from "../command-context.js";
import { type CliIo, formatTable, plural, terminalSafe, writeJson } from "../output.js";
import { SIGNAL_EXIT_CODES } from "./bench.js";
import { type CopyOutcome, type CopyTotals, copyDatabase } from "./db-copy.js";
import { listenForStop } from "./worker.js";

interface CopyFlags {
  from: string;
  to: string;
  dryRun?: boolean;
  json?: boolean;
  progressEvery?: string;
}

/** `--progress-every`: seconds, 0 (a line after every session) to an hour. */
const ProgressEvery = z.coerce
  .number({ error: "must be a number of seconds" })
  .min(0, "must be 0 to 3600 seconds")
  .max(3600, "must be 0 to 3600 seconds");

export function registerDbCommand(program: Command, context: CommandContext): void {
  const db = program
    .command("db")
    .description("Work on a lab's database as a whole (copy it between SQLite and PostgreSQL).")
    .addHelpText(
      "after",
      `
Examples:
  $ agent-lab db copy --from lab.sqlite3 --to postgres://lab@db.example/lab
  $ agent-lab db copy --help`,
    );
  db.command("copy")
    .description(
      "Copy every session (turns, messages, audit log, usage, captured payloads) from one lab's database into another, verify the copy, and print the counts and totals of both sides.",
    )
    .requiredOption("--from <database>", "the source: a SQLite file or a postgres:// URL")
    .requiredOption(
      "--to <database>",
      "the target: a SQLite file or a postgres:// URL (created, with the lab's tables, when missing)",
    )
    .option("--dry-run", "say what would be copied; write nothing, create nothing")
    .option("--json", "print the outcome as JSON: { copied, present, conflicts, source, target }")
    .option(
      "--progress-every <seconds>",
      "how often a progress line goes to stderr (default 2; 0: after every session)",
    )
    .addHelpText(
      "after",
      `
Each session is copied whole or not at all, with its ids, then read back from the target and
compared with the source. A copy run again (after Ctrl-C, a lost connection) copies only what is
missing: sessions already in the target with the same records are counted, not written twice. A
session the target holds with other records is left alone and listed (exit code 1); delete it there
to copy it again. Progress goes to stderr every 2 s (--progress-every). Passwords come from the URL, $PGPASSWORD
or ~/.pgpass and are never printed: URLs are shown as postgres://user:***@host/db.

Examples:
  $ agent-lab db copy --from ~/.local/share/agent-lab/lab.sqlite3 --to postgres://lab@db.example/lab
  $ PGPASSWORD=… agent-lab db copy --from postgres://lab@db.example/lab --to backup.sqlite3
  $ agent-lab db copy --from lab.sqlite3 --to postgres://lab@127.0.0.1/lab --dry-run`,
    )
    .action(async (flags: CopyFlags) => {
      const { io } = context;
      const every =
        flags.progressEvery === undefined
          ? undefined
          : parseInput(ProgressEvery, flags.progressEvery, "--progress-every");
      // Ctrl-C stops between two sessions, each copied whole or not at all; a second one quits.
      const stop = listenForStop();
      let outcome: CopyOutcome;
      try {
        outcome = await copyDatabase({
          from: flags.from,
          to: flags.to,
          dry_run: flags.dryRun === true,
          progress: (line) => io.stderr.write(`${line}\n`),
          ...(every === undefined ? {} : { progress_every_ms: every * 1000 }),
          signal: stop.signal,
        });
      } finally {
        stop.dispose();
      }
      if (flags.json) writeJson(io, outcome);
      else printOutcome(io, flags, outcome);
      const stoppedBy = stop.stoppedBy();
      if (outcome.stopped && stoppedBy !== null) {
        const looked = outcome.copied + outcome.present + outcome.conflicts.length;
        io.stderr.write(
          `agent-lab: db copy stopped by ${stoppedBy} after ${looked} of ${outcome.listed} sessions; those are whole: run the same command again to copy the rest\n`,
        );
        context.exitCode = SIGNAL_EXIT_CODES[stoppedBy];
        return;
      }
      const verified = flags.dryRun === true || totalsEqual(outcome.source, outcome.target);
      if (outcome.conflicts.length > 0 || !verified) context.exitCode = 1;
    });
}

function printOutcome(io: CliIo, flags: CopyFlags, outcome: CopyOutcome): void {
  const from = redactDatabaseUrl(flags.from);
  const to = redactDatabaseUrl(flags.to);
  const lines: string[] = [];
  if (flags.dryRun) {
    lines.push(
      `dry run: ${plural(outcome.copied, "session")} of ${outcome.listed} would be copied from ${from} to ${to}; ${outcome.present} already there`,
    );
  } else {
    lines.push(
      `copied ${plural(outcome.copied, "session")} from ${from} to ${to}; ${outcome.present} already there`,
    );
  }
  const rows: (CopyTotals & { side: string })[] = [{ side: "source", ...outcome.source }];
  if (!flags.dryRun) rows.push({ side: "target", ...outcome.target });
  lines.push(
    "",
    formatTable(rows, [
      { header: "", value: (row) => row.side },
      { header: "SESSIONS", value: (row) => String(row.sessions), align: "right" },
      { header: "TURNS", value: (row) => String(row.turns), align: "right" },
      { header: "MESSAGES", value: (row) => String(row.messages), align: "right" },
      { header: "AUDIT", value: (row) => String(row.audit), align: "right" },
      { header: "USAGE ROWS", value: (row) => String(row.usage_rows), align: "right" },
      { header: "PAYLOADS", value: (row) => String(row.payloads), align: "right" },
      { header: "TOKENS", value: (row) => String(row.total_tokens), align: "right" },
      { header: "COST (USD)", value: (row) => row.cost_usd.toFixed(6), align: "right" },
    ]),
  );
  if (!flags.dryRun) {
    const same = totalsEqual(outcome.source, outcome.target);
    lines.push(
      "",
      same
        ? "verified: the target holds every session counted above, read back with the same records, counts and totals"
        : "NOT verified: the target's totals differ from the source's (see above)",
    );
  }
  for (const conflict of outcome.conflicts) {
    lines.push(
      `conflict: session ${conflict.session_id} is in the target with other records (${conflict.difference}); left as is: delete it there (agent-lab --db TARGET delete ${conflict.session_id} --yes) to copy it`,
    );
  }
  io.stdout.write(`${terminalSafe(lines.join("\n"))}\n`);
}

function totalsEqual(a: CopyTotals, b: CopyTotals): boolean {
  return (Object.keys(a) as (keyof CopyTotals)[]).every((key) =>
    key === "cost_usd" ? Math.abs(a[key] - b[key]) < 1e-9 : a[key] === b[key],
  );
}
