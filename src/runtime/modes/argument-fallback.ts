import type { ToolCallEvent } from "../../domain/events.js";
import type { ChatMessage } from "../../domain/messages.js";
import { auditPayload } from "../audit-payload.js";
import { callModel } from "../model-call.js";
import type { TurnContext } from "../turn-context.js";
import { samplingOf } from "./agent-sampling.js";
import { parseArguments } from "./parse-arguments.js";

export type FallbackOutcome =
  | { ok: true; arguments: Record<string, unknown>; raw_arguments: string }
  | { ok: false; error: string };

const FALLBACK_SYSTEM_PROMPT =
  "You write arguments for one tool call. Reply with only a JSON object of arguments that satisfies the tool's JSON Schema, taking the values from the user's request. No prose.";

/**
 * The dual_agent mode's `argument_fallback`: the event agent gets the tool's schema, the user's
 * request, what the chat agent wrote and why it was refused, and answers with JSON arguments
 * (structured output), which are validated again. Its call is recorded as `fallback:t:r:e`.
 */
export async function repairArguments(
  context: TurnContext,
  round_index: number,
  event: ToolCallEvent,
  problem: string,
  history: readonly ChatMessage[],
): Promise<FallbackOutcome> {
  const tool = context.tools.get(event.name);
  if (!tool) return { ok: false, error: `unknown tool ${event.name}` };
  context.emit({
    type: "fallback_start",
    round_index,
    event_id: event.id,
    event_name: event.name,
    reason: problem,
  });
  await context.audit(
    "fallback_start",
    { event_id: event.id, event_name: event.name, reason: problem },
    round_index,
  );
  const lastUser = [...history].reverse().find((message) => message.role === "user")?.content ?? "";
  let outcome: FallbackOutcome;
  try {
    const result = await callModel(context, {
      model: context.event_model,
      request: {
        // The user's words come last and alone, so a model reading "the latest user message"
        // reads the request, not the tool's description.
        messages: [
          {
            role: "system",
            content: [
              FALLBACK_SYSTEM_PROMPT,
              "",
              `Tool: ${tool.name}: ${tool.description}`,
              `JSON Schema of its arguments: ${JSON.stringify(tool.parameters)}`,
              `The assistant wrote these arguments: ${event.raw_arguments || "(none)"}`,
              `They were refused: ${problem}`,
            ].join("\n"),
            tool_calls: [],
          },
          { role: "user", content: lastUser, tool_calls: [] },
        ],
        response_format: { type: "json_schema", name: tool.name, schema: tool.parameters },
        ...samplingOf(context.config.event_agent),
        conversation_id: `${context.session_id}:event_agent`,
      },
      agent: "event_agent",
      call_kind: "argument_fallback",
      round_index,
      metric_key: `fallback:${context.turn_index}:${round_index}:${event.id}`,
      event: { id: event.id, name: event.name },
    });
    const parsed = parseArguments(result.text);
    const verdict = parsed.ok ? context.tools.validate(tool.name, parsed.value) : parsed;
    outcome =
      parsed.ok && verdict.ok
        ? { ok: true, arguments: parsed.value, raw_arguments: result.text }
        : result.refusal !== ""
          ? { ok: false, error: `the event agent refused: ${result.refusal}` }
          : {
              ok: false,
              error: `the event agent's arguments were refused too: ${verdict.ok ? "" : verdict.error}`,
            };
  } catch (error) {
    if (context.signal.aborted) throw error;
    outcome = {
      ok: false,
      error: `the event agent failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const repaired = outcome.ok
    ? { ...event, arguments: outcome.arguments, raw_arguments: outcome.raw_arguments }
    : null;
  context.emit({
    type: "fallback_end",
    round_index,
    event_id: event.id,
    ok: outcome.ok,
    event: repaired,
    error: outcome.ok ? null : outcome.error,
  });
  await context.audit(
    "fallback_end",
    {
      event_id: event.id,
      ok: outcome.ok,
      ...(outcome.ok ? { arguments: auditPayload(outcome.arguments) } : { error: outcome.error }),
    },
    round_index,
  );
  return outcome;
}
