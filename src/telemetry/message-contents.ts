import type { MessageRecord } from "../domain/records.js";
import { redactSecretText } from "../domain/secrets.js";
import type { TurnTrace } from "./turn-trace.js";

/**
 * Message contents in the GenAI conventions' JSON shapes (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.tool.call.arguments` / `.result`), only set when
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. Every text is redacted of key shapes
 * on the way out, as the lab redacts what it stores.
 */

type Part =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; response: string };

interface GenAiMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

function partsOf(message: MessageRecord): Part[] {
  if (message.role === "tool") {
    return [
      { type: "tool_call_response", id: message.tool_call_id ?? "", response: message.content },
    ];
  }
  const parts: Part[] = [];
  if (message.reasoning) parts.push({ type: "reasoning", content: message.reasoning });
  if (message.content !== "") parts.push({ type: "text", content: message.content });
  for (const call of message.tool_calls) {
    parts.push({ type: "tool_call", id: call.id, name: call.name, arguments: call.arguments });
  }
  return parts;
}

function genAiMessage(message: MessageRecord, finish_reason?: string | null): GenAiMessage {
  return {
    role: message.role,
    parts: partsOf(message),
    ...(finish_reason ? { finish_reason } : {}),
  };
}

export function contentText(value: unknown): string {
  return redactSecretText(typeof value === "string" ? value : JSON.stringify(value));
}

/** The turn's assistant messages in round order (round r's is the r-th). */
function assistants(trace: TurnTrace): MessageRecord[] {
  return trace.messages.filter((message) => message.role === "assistant");
}

/** A chat call of round `round_index`: what this turn had sent by then, and what it answered. */
export function chatContents(
  trace: TurnTrace,
  round_index: number,
  finish_reason: string | null,
): { input: string; output: string | null } {
  const answer = assistants(trace)[round_index - 1];
  const before =
    answer === undefined ? trace.messages : trace.messages.filter((m) => m.id < answer.id);
  return {
    input: contentText(before.map((message) => genAiMessage(message))),
    output: answer === undefined ? null : contentText([genAiMessage(answer, finish_reason)]),
  };
}

/** The chat agent's system message, as `gen_ai.system_instructions` puts it. */
export function systemInstructions(trace: TurnTrace): string | null {
  return trace.system_prompt === null
    ? null
    : contentText([{ type: "text", content: trace.system_prompt }]);
}

/** The turn as the agent saw it: the user's message in, the last answer out. */
export function turnContents(trace: TurnTrace): { input: string | null; output: string | null } {
  const user = trace.messages.find((message) => message.role === "user");
  const last = assistants(trace).at(-1);
  return {
    input: user === undefined ? null : contentText([genAiMessage(user)]),
    output: last === undefined ? null : contentText([genAiMessage(last)]),
  };
}

/** A tool call's arguments (as the assistant message stored them) and its reply. */
export function toolContents(
  trace: TurnTrace,
  event_id: string | null,
): { arguments: string | null; result: string | null } {
  if (event_id === null) return { arguments: null, result: null };
  const call = trace.messages
    .flatMap((message) => message.tool_calls)
    .find((candidate) => candidate.id === event_id);
  const reply = trace.messages.find(
    (message) => message.role === "tool" && message.tool_call_id === event_id,
  );
  return {
    arguments: call === undefined ? null : contentText(call.arguments),
    result: reply === undefined ? null : contentText(reply.content),
  };
}
