import type { Command } from "commander";
import { SessionNotFoundError } from "../../domain/errors.js";
import type { UsageRollup, UsageSummary } from "../../domain/usage.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import {
  type CliIo,
  formatCount,
  formatMs,
  formatTable,
  terminalSafe,
  writeJson,
} from "../output.js";

interface UsageRow extends UsageRollup {
  label: string;
  ttft_ms: number | null;
}

export function registerUsageCommand(program: Command, context: CommandContext): void {
  program
    .command("usage")
    .description(
      "Show what a session cost: tokens, cached tokens, calls, fallbacks, tool executions and times, per turn and in total.",
    )
    .argument("<session>", "the session id (see agent-lab sessions)")
    .option("--json", "print the usage summary record: { calls, turns, session }")
    .addHelpText(
      "after",
      `
TTFT is the time to first token of each turn's first chat completion; ELAPSED sums every call's
time, WALL is the turn's measured wall clock (smaller when tools ran while the model streamed).
A TOTAL marked * includes estimated counts: calls cut short (cancelled, failed mid-stream) or
whose endpoint reported no usage, counted with the lab's tokenizer ("estimated": true in --json).

Examples:
  $ agent-lab usage 3f1c…
  $ agent-lab usage 3f1c… --json | jq '.session.total_tokens'`,
    )
    .action((sessionId: string, flags: { json?: boolean }, command: Command) => {
      const store = openStoreForReading(context.database(command));
      if (store === null) throw new SessionNotFoundError(sessionId);
      let summary: UsageSummary;
      try {
        summary = store.usageSummary(sessionId);
        // A legacy file may hold calls of a session without its row; those still have usage.
        if (store.getSession(sessionId) === null && summary.calls.length === 0) {
          throw new SessionNotFoundError(sessionId);
        }
      } finally {
        store.close();
      }
      if (flags.json) writeJson(context.io, summary);
      else printUsage(context.io, sessionId, summary);
    });
}

/** The per-turn table and the totals; `chat` prints it for /usage. */
export function printUsage(io: CliIo, sessionId: string, summary: UsageSummary): void {
  const firstTtft = new Map<number, number | null>();
  for (const call of summary.calls) {
    if (call.call_kind === "chat_completion" && !firstTtft.has(call.turn_index)) {
      firstTtft.set(call.turn_index, call.ttft_ms);
    }
  }
  const rows: UsageRow[] = summary.turns.map((turn) => ({
    ...turn,
    label: String(turn.turn_index),
    ttft_ms: firstTtft.get(turn.turn_index) ?? null,
  }));
  rows.push({ ...summary.session, label: "total", ttft_ms: null });
  io.stdout.write(`Usage of session ${terminalSafe(sessionId)}\n\n`);
  io.stdout.write(
    `${formatTable(rows, [
      { header: "TURN", value: (row) => row.label },
      { header: "CALLS", value: (row) => String(row.call_count), align: "right" },
      { header: "TOOLS", value: (row) => String(row.tool_count), align: "right" },
      { header: "FALLBACKS", value: (row) => String(row.fallback_count), align: "right" },
      { header: "PROMPT", value: (row) => formatCount(row.prompt_tokens), align: "right" },
      {
        header: "COMPLETION",
        value: (row) => formatCount(row.completion_tokens),
        align: "right",
      },
      { header: "CACHED", value: (row) => formatCount(row.cached_tokens), align: "right" },
      {
        header: "TOTAL",
        value: (row) => `${formatCount(row.total_tokens)}${row.estimated_count > 0 ? "*" : ""}`,
        align: "right",
      },
      { header: "TTFT", value: (row) => formatMs(row.ttft_ms), align: "right" },
      { header: "ELAPSED", value: (row) => formatMs(row.elapsed_ms), align: "right" },
      { header: "WALL", value: (row) => formatMs(row.turn_wall_time_ms), align: "right" },
    ])}\n`,
  );
  if (summary.turns.length === 0) io.stdout.write("\nNo calls recorded yet.\n");
  const estimated = summary.session.estimated_count;
  if (estimated > 0) {
    io.stdout.write(
      `\n* estimated: ${estimated} ${estimated === 1 ? "call" : "calls"} without the endpoint's usage (cut short, or not reported), counted with the lab's tokenizer\n`,
    );
  }
}
