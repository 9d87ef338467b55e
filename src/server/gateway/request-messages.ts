import { InvalidInputError } from "../../domain/errors.js";
import type { RequestMessage } from "../../domain/gateway.js";

/**
 * What the gateway reads from a request's messages: clients resend the whole conversation every
 * time, and only its end is news. A request ending with a user message starts a turn; one ending
 * with tool messages carries the replies the waiting turn needs.
 */

export interface ToolReply {
  tool_call_id: string;
  content: string;
}

export type RequestKind =
  /** `replies`: the tool messages right before it (a client that answered and went on). */
  | { kind: "user"; message: string; replies: ToolReply[] }
  | { kind: "tool_replies"; replies: ToolReply[] };

/**
 * Text content as a string: the text parts of a part list, one per line, as vLLM joins them for
 * a model's template (images are not text). Run together, `["Summarise:", "the log"]` read as
 * "Summarise:the log".
 */
export function textOf(content: RequestMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
}

/**
 * What a message says, as text: role, text, name, the call it answers and its calls (id, name,
 * arguments). Not the rest of it: a client may mark its latest messages differently on every
 * request (prompt-cache markers, a part list for a string), and the conversation is still the
 * same one.
 */
export function saidOf(message: RequestMessage): string {
  return JSON.stringify([
    message.role,
    textOf(message.content),
    message.name ?? null,
    message.tool_call_id ?? null,
    (message.tool_calls ?? []).map((call) => [
      call.id,
      call.function.name,
      call.function.arguments,
    ]),
  ]);
}

/** The part types a model would have to see or hear: an image, audio, a file. */
const MEDIA_PARTS = new Set(["image_url", "input_audio", "file"]);

/** The kinds of a message's media parts (`[image_url]`, `[input_audio]`, `[file]`), in order. */
function mediaKinds(message: RequestMessage): string[] {
  return Array.isArray(message.content)
    ? message.content.filter((part) => MEDIA_PARTS.has(part.type)).map((part) => `[${part.type}]`)
    : [];
}

/**
 * The first message that carries an image, audio or a file, by its index, else null: a request the
 * lab writes itself (dual_agent) sends the model text only, and must not answer as if it had seen
 * them.
 */
export function firstMediaMessage(messages: readonly RequestMessage[]): number | null {
  const index = messages.findIndex((message) => mediaKinds(message).length > 0);
  return index === -1 ? null : index;
}

export function classifyRequest(messages: readonly RequestMessage[]): RequestKind {
  const last = messages.at(-1);
  if (last?.role === "user") {
    const message = turnMessageOf(last);
    if (message === "") {
      throw new InvalidInputError(
        `messages.${messages.length - 1}.content: the last user message is empty`,
      );
    }
    return { kind: "user", message, replies: repliesBefore(messages, messages.length - 1) };
  }
  if (last?.role === "tool") {
    return { kind: "tool_replies", replies: repliesBefore(messages, messages.length) };
  }
  throw new InvalidInputError(
    `messages.${messages.length - 1}.role: the last message must be a user message or tool replies, not ${last?.role}`,
  );
}

/** The tool messages that end `messages.slice(0, end)`, in order. */
function repliesBefore(messages: readonly RequestMessage[], end: number): ToolReply[] {
  const replies: ToolReply[] = [];
  for (let index = end - 1; index >= 0; index--) {
    const message = messages[index] as RequestMessage;
    if (message.role !== "tool") break;
    if (message.tool_call_id === undefined) {
      throw new InvalidInputError(
        `messages.${index}.tool_call_id: a tool message needs the tool_call_id it answers`,
      );
    }
    replies.unshift({ tool_call_id: message.tool_call_id, content: textOf(message.content) });
  }
  return replies;
}

/**
 * A user message as the turn it starts records it: its text, then the kinds of its media (an
 * image, audio…: the model gets it as sent in pass-through, and the record says it was there).
 * Empty when it holds neither.
 */
function turnMessageOf(message: RequestMessage): string {
  const text = textOf(message.content);
  return [...(text.trim() === "" ? [] : [text]), ...mediaKinds(message)].join(" ");
}

/** The request's last user message as a turn records it (see turnMessageOf); null without one. */
export function lastUserMessageOf(messages: readonly RequestMessage[]): string | null {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as RequestMessage;
    if (message.role === "user") return turnMessageOf(message);
  }
  return null;
}

/** The system (or developer) messages before the first user message, joined: the chat agent's prompt. */
export function systemPromptOf(messages: readonly RequestMessage[]): string | undefined {
  const parts: string[] = [];
  for (const message of messages) {
    if (message.role !== "system" && message.role !== "developer") break;
    parts.push(textOf(message.content));
  }
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/**
 * The answer this request says it last received: the content of the last assistant message before
 * the final user message, or null when the conversation has none (it starts here).
 */
export function previousAnswerOf(messages: readonly RequestMessage[]): string | null {
  for (let index = messages.length - 2; index >= 0; index--) {
    const message = messages[index] as RequestMessage;
    if (message.role === "assistant") return textOf(message.content);
  }
  return null;
}
