import type { Command } from "commander";
import { SessionNotFoundError } from "../../domain/errors.js";
import type { SessionRecord, TurnRecord } from "../../domain/records.js";
import { LabSessionConfig } from "../../domain/session-config.js";
import type { UsageCallRecord, UsageRollup, UsageSummary } from "../../domain/usage.js";
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
import { findSession, resolveSession } from "../session-id.js";
import { callCostText, rollupCostText, servedByAnother } from "../usage-cost.js";

interface UsageRow extends UsageRollup {
  label: string;
  status: string;
  ttft_ms: number | null;
}

/** How a turn ended, by index: its usage row says so (a cancelled turn's counts stop early). */
export type TurnStatuses = ReadonlyMap<number, string>;

export function turnStatuses(turns: readonly TurnRecord[]): TurnStatuses {
  return new Map(turns.map((turn) => [turn.turn_index, turn.status]));
}

export function registerUsageCommand(program: Command, context: CommandContext): void {
  program
    .command("usage")
    .description(
      "Show what a session cost: tokens (cached, cache writes, reasoning), money, calls, fallbacks, tool executions and times, per turn, per call and in total.",
    )
    .argument("<session>", "the session id, or a unique prefix of it (see agent-lab sessions)")
    .option("--json", "print the usage summary record: { calls, turns, session }")
    .addHelpText(
      "after",
      `
TTFT is the time to first token of each turn's first chat completion; ELAPSED sums every call's
time, WALL is the turn's measured wall clock (smaller when tools ran while the model streamed).
A TOTAL marked * includes estimated counts: calls cut short (cancelled, failed mid-stream) or
whose endpoint reported no usage, counted with the lab's tokenizer ("estimated": true in --json).
REASONING is the part of COMPLETION the model spent thinking; CACHED and CACHE WRITE are parts of
PROMPT read from and written to the provider's cache.

COST is "reported" when the provider priced the call itself (OpenRouter's usage.cost, say) and
"est." when the lab's price table did (built-in list prices, or the session config's prices:);
"mixed" sums both, "+?" means some calls have no price at all (unknown model, none reported).
A model marked † answered in place of the one requested (routers do that).

The call table's KEY opens that call's request body and raw response: agent-lab call SESSION KEY.

Examples:
  $ agent-lab usage 3f1c…
  $ agent-lab usage 3f1c… --json | jq '.session.cost_usd'
  $ agent-lab call 3f1c… chat:1:1`,
    )
    .action(async (sessionId: string, flags: { json?: boolean }, command: Command) => {
      const store = await openStoreForReading(context.database(command));
      if (store === null) throw new SessionNotFoundError(sessionId);
      let summary: UsageSummary;
      let session: SessionRecord | null;
      let statuses: TurnStatuses = new Map();
      try {
        session = await findSession(store, sessionId);
        summary = await store.usageSummary(session?.id ?? sessionId);
        // A legacy file may hold calls of a session without its row; those still have usage.
        if (session === null && summary.calls.length === 0) {
          session = await resolveSession(store, sessionId); // throws, saying how to find the id
        }
        if (session !== null) statuses = turnStatuses(await store.listTurns(session.id));
      } finally {
        await store.close();
      }
      if (flags.json) writeJson(context.io, summary);
      else printUsage(context.io, session?.id ?? sessionId, summary, session, statuses);
    });
}

/** The per-turn table with the totals, then one line per call; `chat` prints it for /usage. */
export function printUsage(
  io: CliIo,
  sessionId: string,
  summary: UsageSummary,
  session: SessionRecord | null = null,
  statuses: TurnStatuses = new Map(),
): void {
  const firstTtft = new Map<number, number | null>();
  for (const call of summary.calls) {
    if (call.call_kind === "chat_completion" && !firstTtft.has(call.turn_index)) {
      firstTtft.set(call.turn_index, call.ttft_ms);
    }
  }
  const rows: UsageRow[] = summary.turns.map((turn) => ({
    ...turn,
    label: String(turn.turn_index),
    status: statuses.get(turn.turn_index) ?? "",
    ttft_ms: firstTtft.get(turn.turn_index) ?? null,
  }));
  rows.push({ ...summary.session, label: "total", status: "", ttft_ms: null });
  io.stdout.write(`Usage of session ${terminalSafe(sessionId)}\n\n`);
  io.stdout.write(
    `${formatTable(rows, [
      { header: "TURN", value: (row) => row.label },
      { header: "STATUS", value: (row) => row.status },
      { header: "CALLS", value: (row) => String(row.call_count), align: "right" },
      { header: "TOOLS", value: (row) => String(row.tool_count), align: "right" },
      { header: "FALLBACKS", value: (row) => String(row.fallback_count), align: "right" },
      ...tokenColumns<UsageRow>(),
      {
        header: "TOTAL",
        value: (row) => `${formatCount(row.total_tokens)}${row.estimated_count > 0 ? "*" : ""}`,
        align: "right",
      },
      { header: "COST", value: rollupCostText, align: "right" },
      { header: "TTFT", value: (row) => formatMs(row.ttft_ms), align: "right" },
      { header: "ELAPSED", value: (row) => formatMs(row.elapsed_ms), align: "right" },
      { header: "WALL", value: (row) => formatMs(row.turn_wall_time_ms), align: "right" },
    ])}\n`,
  );
  if (summary.turns.length === 0) {
    io.stdout.write("\nNo calls recorded yet.\n");
    return;
  }
  const stopped = rows.filter((row) => STOPPED.has(row.status)).map((row) => row.label);
  if (stopped.length > 0) {
    io.stdout.write(
      `\n${stopped.length === 1 ? "Turn" : "Turns"} ${stopped.join(", ")} stopped before the end (${[...new Set(rows.filter((row) => STOPPED.has(row.status)).map((row) => row.status))].join(", ")}): the usage counts the calls made until then; a TOTAL marked * holds estimated counts of calls cut short\n`,
    );
  }
  const requested = requestedModels(session);
  io.stdout.write(`\nCalls (agent-lab call ${terminalSafe(sessionId)} KEY shows one)\n\n`);
  io.stdout.write(`${formatTable(summary.calls, callColumns(requested))}\n`);
  printNotes(io, summary, requested);
}

/** Turn statuses whose usage stops part way. */
const STOPPED = new Set(["cancelled", "failed", "interrupted"]);

/** Prompt, its cached and cache-written parts, completion and its reasoning part. */
type TokenCounts = Pick<
  UsageRollup,
  | "prompt_tokens"
  | "cached_tokens"
  | "cache_write_tokens"
  | "completion_tokens"
  | "reasoning_tokens"
>;

function tokenColumns<Row extends TokenCounts>() {
  return [
    { header: "PROMPT", value: (row: Row) => formatCount(row.prompt_tokens), align: "right" },
    { header: "CACHED", value: (row: Row) => formatCount(row.cached_tokens), align: "right" },
    {
      header: "CACHE WRITE",
      value: (row: Row) => formatCount(row.cache_write_tokens),
      align: "right",
    },
    {
      header: "COMPLETION",
      value: (row: Row) => formatCount(row.completion_tokens),
      align: "right",
    },
    {
      header: "REASONING",
      value: (row: Row) => formatCount(row.reasoning_tokens),
      align: "right",
    },
  ] as const;
}

type RequestedModels = Partial<Record<UsageCallRecord["agent"], string>>;

function requestedModels(session: SessionRecord | null): RequestedModels {
  const config = session === null ? null : LabSessionConfig.safeParse(session.config);
  if (!config?.success) return {};
  return { chat_agent: config.data.chat_agent.model, event_agent: config.data.event_agent.model };
}

function callColumns(requested: RequestedModels) {
  const modelOf = (call: UsageCallRecord) => {
    if (call.call_kind === "tool_execution") return call.event_name ?? "tool";
    const asked = requested[call.agent];
    const served = call.response_model ?? asked ?? "";
    return servedByAnother(asked, call.response_model) ? `${served} †` : served;
  };
  const finishOf = (call: UsageCallRecord) =>
    [call.finish_reason ?? "", call.refusal ? "refusal" : ""].filter(Boolean).join(", ") || "–";
  return [
    { header: "KEY", value: (call: UsageCallRecord) => call.metric_key ?? `#${call.id}` },
    { header: "MODEL / TOOL", value: modelOf },
    ...tokenColumns<UsageCallRecord>(),
    {
      header: "TOTAL",
      value: (call: UsageCallRecord) =>
        `${formatCount(call.total_tokens)}${call.estimated ? "*" : ""}`,
      align: "right",
    },
    { header: "COST", value: callCostText, align: "right" },
    { header: "TTFT", value: (call: UsageCallRecord) => formatMs(call.ttft_ms), align: "right" },
    {
      header: "ELAPSED",
      value: (call: UsageCallRecord) => formatMs(call.elapsed_ms),
      align: "right",
    },
    { header: "FINISH", value: finishOf },
  ] as const;
}

function printNotes(io: CliIo, summary: UsageSummary, requested: RequestedModels): void {
  const notes: string[] = [];
  const estimated = summary.session.estimated_count;
  if (estimated > 0) {
    notes.push(
      `* estimated: ${estimated} ${estimated === 1 ? "call" : "calls"} without the endpoint's usage (cut short, or not reported), counted with the lab's tokenizer`,
    );
  }
  const substituted = summary.calls.filter((call) =>
    servedByAnother(requested[call.agent], call.response_model),
  );
  for (const call of substituted) {
    notes.push(
      `† ${call.metric_key ?? `#${call.id}`}: asked for ${requested[call.agent]}, answered by ${call.response_model}`,
    );
  }
  const unpriced = summary.session.unpriced_count;
  if (unpriced > 0) {
    notes.push(
      `? ${unpriced} model ${unpriced === 1 ? "call has" : "calls have"} no price: the provider reported none and the price table does not know the model (add it under prices: in the session config)`,
    );
  }
  if (notes.length > 0) io.stdout.write(`\n${terminalSafe(notes.join("\n"))}\n`);
}
