import { z } from "zod";
import type { TurnFacts } from "../domain/experiment.js";
import type {
  ScoringCall,
  ScoringMessage,
  ScoringToolEnd,
  ScoringTurn,
} from "../store/experiment-records.js";
import type { SessionStore } from "../store/session-store.js";

/**
 * What each turn of a stored session did, in the shape scoring needs, read from the store alone
 * (so any face can score any stored session):
 * - status and wall time from the turn record;
 * - answer: the text of the turn's last assistant message (its final round);
 * - rounds: the turn's chat_completion calls; responses: its assistant messages;
 * - tool_calls: every assistant tool call of the turn, in order, with the arguments as stored
 *   (after an argument fallback repaired them, what actually ran) and as the model wrote them,
 *   the round (the turn's nth assistant message) that made it, `ok` from its tool reply
 *   (`{"error": …}` → false; the audit log's `tool_end` when the reply is missing; else null),
 *   `used_fallback` from its tool_execution usage row;
 * - ttft of the turn's first chat call, and the turn's usage roll-up (tokens, fallback and tool
 *   counts).
 */
export async function readRunFacts(store: SessionStore, sessionId: string): Promise<TurnFacts[]> {
  const [turns, messages, usage, audit] = await Promise.all([
    store.listTurns(sessionId),
    store.listMessages(sessionId),
    store.usageSummary(sessionId),
    store.listAuditLogs(sessionId),
  ]);
  return runFactsOf({ turns, messages, calls: usage.calls, audit });
}

/**
 * One session's rows, in the store's order (audit: `tool_end` rows are the ones read), as the
 * per-session reads return them or as a report reads them in bulk (ExperimentScoringRows).
 */
export interface RunRows {
  turns: readonly ScoringTurn[];
  messages: readonly ScoringMessage[];
  calls: readonly ScoringCall[];
  audit: readonly ScoringToolEnd[];
}

/**
 * `readRunFacts` over rows already read (a report reads them in bulk). Each turn's token and
 * fallback figures are summed from its calls, as the store's roll-up sums them.
 */
export function runFactsOf(rows: RunRows): TurnFacts[] {
  const messagesByTurn = groupByTurn(rows.messages);
  const callsByTurn = groupByTurn(rows.calls);
  const auditByTurn = groupByTurn(rows.audit);
  // Plain loops, no intermediate arrays: a report scores tens of thousands of runs at once.
  return rows.turns.map((turn): TurnFacts => {
    const index = turn.turn_index;
    const turnMessages = messagesByTurn.get(index) ?? NONE;
    const calls = callsByTurn.get(index) ?? NONE;
    // The turn's first chat call, by round then id (its ttft), and how many there are.
    let rounds = 0;
    let first: ScoringCall | undefined;
    for (const call of calls) {
      if (call.call_kind !== "chat_completion") continue;
      rounds += 1;
      if (
        first === undefined ||
        call.round_index < first.round_index ||
        (call.round_index === first.round_index && call.id < first.id)
      ) {
        first = call;
      }
    }
    let responses = 0;
    let answer = "";
    for (const message of turnMessages) {
      if (message.role !== "assistant") continue;
      responses += 1;
      answer = message.content;
    }
    return {
      status: turn.status,
      answer,
      rounds,
      responses,
      tool_calls: toolCallsOf(turnMessages, calls, auditByTurn.get(index) ?? NONE),
      ...failureOf(turn.status, auditByTurn.get(index) ?? NONE),
      ttft_ms: first?.ttft_ms ?? null,
      wall_time_ms: turn.wall_time_ms,
      ...turnTotals(calls),
    };
  });
}

const NONE: readonly never[] = [];

type TurnTotals = Pick<
  TurnFacts,
  | "prompt_tokens"
  | "cached_tokens"
  | "completion_tokens"
  | "total_tokens"
  | "fallback_count"
  | "tool_count"
>;

/** A turn's token and call counts, summed from its calls as the store's roll-up sums them. */
function turnTotals(calls: readonly ScoringCall[]): TurnTotals {
  let prompt = 0;
  let cached = 0;
  let completion = 0;
  let total = 0;
  let fallbacks = 0;
  let tools = 0;
  for (const call of calls) {
    prompt += call.prompt_tokens;
    cached += call.cached_tokens;
    completion += call.completion_tokens;
    total += call.total_tokens;
    if (call.call_kind === "argument_fallback") fallbacks += 1;
    if (call.call_kind === "tool_execution") tools += 1;
  }
  return {
    prompt_tokens: prompt,
    cached_tokens: cached,
    completion_tokens: completion,
    total_tokens: total,
    fallback_count: fallbacks,
    tool_count: tools,
  };
}

function groupByTurn<Row extends { turn_index: number | null }>(
  rows: readonly Row[],
): Map<number | null, Row[]> {
  const grouped = new Map<number | null, Row[]>();
  for (const row of rows) {
    const group = grouped.get(row.turn_index);
    if (group === undefined) grouped.set(row.turn_index, [row]);
    else group.push(row);
  }
  return grouped;
}

/** A failed turn's reason (its `turn_failed` row: code and message), when it has one. */
function failureOf(
  status: string,
  audit: readonly ScoringToolEnd[],
): Pick<TurnFacts, "error"> | Record<string, never> {
  if (status !== "failed") return {};
  for (const entry of audit) {
    const details = TurnFailedDetails.safeParse(entry.details);
    if (entry.event === "turn_failed" && details.success) {
      return { error: `${details.data.code}: ${details.data.message}` };
    }
  }
  return {};
}

const TurnFailedDetails = z.looseObject({ code: z.string(), message: z.string() });

function toolCallsOf(
  messages: readonly ScoringMessage[],
  calls: readonly ScoringCall[],
  audit: readonly ScoringToolEnd[],
): TurnFacts["tool_calls"] {
  const made: TurnFacts["tool_calls"] = [];
  // Most turns call nothing: their replies, executions and audit rows are not even looked at.
  if (!messages.some((message) => message.role === "assistant" && message.tool_calls.length > 0))
    return made;
  const replies = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "tool" && message.tool_call_id !== null) {
      replies.set(message.tool_call_id, message.content);
    }
  }
  const executions = new Map<string, ScoringCall>();
  for (const call of calls) {
    if (call.call_kind === "tool_execution" && call.event_id !== null) {
      executions.set(call.event_id, call);
    }
  }
  const ended = new Map<string, boolean>();
  for (const entry of audit) {
    const details = ToolEndDetails.safeParse(entry.details);
    if (entry.event === "tool_end" && details.success) {
      ended.set(details.data.event_id, details.data.ok);
    }
  }
  let round = 0;
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    round += 1;
    for (const call of message.tool_calls) {
      const reply = replies.get(call.id);
      made.push({
        name: call.name,
        arguments: call.arguments,
        raw_arguments: call.raw_arguments,
        round,
        ok: reply !== undefined ? !isErrorReply(reply) : (ended.get(call.id) ?? null),
        used_fallback: executions.get(call.id)?.used_fallback ?? false,
      });
    }
  }
  return made;
}

const ToolEndDetails = z.looseObject({ event_id: z.string(), ok: z.boolean() });

/** A tool reply is an error when it is a JSON object with a non-empty `error` (the kernel's form). */
const ErrorReply = z.looseObject({
  error: z.unknown().refine((error) => error !== null && error !== undefined && error !== false),
});

function isErrorReply(content: string): boolean {
  // Most replies are no error object, and a report reads every reply: parse only what may be one
  // (an object, naming `error` as such or through an escape).
  if (content.trimStart()[0] !== "{") return false;
  if (!content.includes("error") && !content.includes("\\")) return false;
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    // Plain text is a tool's output, not an error report.
    return false;
  }
  return ErrorReply.safeParse(value).success;
}
