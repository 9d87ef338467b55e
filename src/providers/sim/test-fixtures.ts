import { renderEventCatalog } from "../../domain/event-protocol.js";
import type { ChatMessage } from "../../domain/messages.js";
import type { ChatModelPart, ChatToolDefinition } from "../chat-model.js";

/** Shared by the sim adapter's tests only: messages, the built-ins' schemas, stream helpers. */

export const SEARCH_DEFINITION: ChatToolDefinition = {
  name: "mock_search",
  description: "Search the mock knowledge base.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "integer", minimum: 1, maximum: 10 },
    },
    required: ["query"],
    additionalProperties: false,
  },
};

export const TICKET_DEFINITION: ChatToolDefinition = {
  name: "mock_ticket",
  description: "File a ticket in the mock tracker.",
  parameters: {
    type: "object",
    properties: {
      title: { type: "string" },
      priority: { type: "string", enum: ["low", "normal", "high"] },
      body: { type: "string" },
    },
    required: ["title"],
    additionalProperties: false,
  },
};

export const BUILTIN_DEFINITIONS = [SEARCH_DEFINITION, TICKET_DEFINITION];

export const message = (
  role: ChatMessage["role"],
  content: string,
  extra: Partial<ChatMessage> = {},
): ChatMessage => ({ role, content, tool_calls: [], ...extra });

export const system = (content = "You are a helpful assistant."): ChatMessage =>
  message("system", content);
export const user = (content: string): ChatMessage => message("user", content);

/** A dual_agent system prompt: instructions and the event catalog. */
export function catalogPrompt(definitions: readonly ChatToolDefinition[] = BUILTIN_DEFINITIONS) {
  return system(`You are a helpful assistant.\n\n${renderEventCatalog(definitions)}`);
}

export async function collect(stream: AsyncIterable<ChatModelPart>): Promise<ChatModelPart[]> {
  const parts: ChatModelPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

export type PartOf<Type extends ChatModelPart["type"]> = Extract<ChatModelPart, { type: Type }>;

export function partsOf<Type extends ChatModelPart["type"]>(
  parts: readonly ChatModelPart[],
  type: Type,
): PartOf<Type>[] {
  return parts.filter((part): part is PartOf<Type> => part.type === type);
}

export const textOf = (parts: readonly ChatModelPart[]): string =>
  partsOf(parts, "text-delta")
    .map((part) => part.text)
    .join("");

export function finishOf(parts: readonly ChatModelPart[]): PartOf<"finish"> {
  const finish = parts.at(-1);
  if (finish?.type !== "finish") throw new Error("the stream did not end with a finish part");
  return finish;
}

export function usageOf(parts: readonly ChatModelPart[]): PartOf<"usage"> {
  const usage = partsOf(parts, "usage")[0];
  if (usage === undefined) throw new Error("the stream reported no usage");
  return usage;
}

/** `<event name="…">…</event>` tags in a text, as the dual_agent parser will lift them. */
export function eventTags(text: string): { name: string; raw_arguments: string }[] {
  return [...text.matchAll(/<event name="([^"]*)">([\s\S]*?)<\/event>/g)].map((match) => ({
    name: match[1] as string,
    raw_arguments: match[2] as string,
  }));
}

/** The parts without their timing values, for comparing two runs. */
export function withoutTimings(parts: readonly ChatModelPart[]): unknown[] {
  return parts.map((part) => {
    if (part.type === "response-start") return { ...part, at_ms: 0, started_at: 0 };
    if (part.type === "first-token") return { ...part, ttft_ms: 0 };
    if (part.type === "finish") return { ...part, ttft_ms: 0, elapsed_ms: 0 };
    return part;
  });
}

/** Parses JSON in a test, returning undefined instead of throwing. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
