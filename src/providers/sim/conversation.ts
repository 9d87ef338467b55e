import { parseEventCatalog, parseEventResults } from "../../domain/event-protocol.js";
import type { ChatMessage } from "../../domain/messages.js";
import type { ChatModelRequest, ChatToolDefinition } from "../chat-model.js";

/**
 * What the simulated model sees in a request: which tools it may call and how (native `tools` or
 * the dual_agent event catalog), what the user last asked, and whether tool results are waiting
 * to be answered.
 */

export type ToolOffer =
  | { style: "native"; names: string[]; tools: readonly ChatToolDefinition[] }
  | { style: "events"; names: string[] }
  | { style: "none"; names: [] };

/** One tool result to answer from, whichever mode delivered it. */
export interface ToolOutcome {
  name: string;
  content: string;
}

export function toolOffer(request: ChatModelRequest): ToolOffer {
  if (request.tools !== undefined && request.tools.length > 0) {
    return { style: "native", names: request.tools.map((tool) => tool.name), tools: request.tools };
  }
  const system = request.messages
    .filter((message) => message.role === "system")
    .map((message) => message.content)
    .join("\n");
  const names = parseEventCatalog(system);
  return names === null ? { style: "none", names: [] } : { style: "events", names };
}

/** The newest user message's text, without any `<event_result>` blocks; "" when there is none. */
export function latestUserText(messages: readonly ChatMessage[]): string {
  const message = messages.findLast((candidate) => candidate.role === "user");
  return message === undefined ? "" : withoutEventResults(message.content);
}

export function withoutEventResults(text: string): string {
  return text.replace(/<event_result\b[\s\S]*?<\/event_result>/g, " ").trim();
}

/**
 * The tool results the conversation ends with, or null when it ends with something else:
 * trailing `tool` messages (native) or a user-side message holding `<event_result>` blocks.
 */
export function pendingResults(messages: readonly ChatMessage[]): ToolOutcome[] | null {
  const last = messages.at(-1);
  if (last === undefined) return null;
  if (last.role === "tool") {
    let start = messages.length - 1;
    while (start > 0 && messages[start - 1]?.role === "tool") start--;
    const results = messages.slice(start);
    const names = callNames(messages, start, results);
    return results.map((message) => ({
      name: names.get(message.tool_call_id ?? "") ?? message.name ?? "tool",
      content: message.content,
    }));
  }
  if (last.role === "assistant") return null;
  const results = parseEventResults(last.content);
  return results.length > 0
    ? results.map((result) => ({ name: result.name, content: result.content }))
    : null;
}

/**
 * The names of the calls `results` answer, each from the latest call of its id before `start`:
 * read backwards, so it stops at the calls' own message instead of walking a long history.
 */
function callNames(
  messages: readonly ChatMessage[],
  start: number,
  results: readonly ChatMessage[],
): Map<string, string> {
  const wanted = new Set(results.map((message) => message.tool_call_id ?? ""));
  const names = new Map<string, string>();
  for (let index = start - 1; index >= 0 && names.size < wanted.size; index--) {
    const calls = (messages[index] as ChatMessage).tool_calls;
    for (let position = calls.length - 1; position >= 0; position--) {
      const call = calls[position];
      if (call !== undefined && wanted.has(call.id) && !names.has(call.id)) {
        names.set(call.id, call.name);
      }
    }
  }
  return names;
}
