import type { ChatMessage } from "../../domain/messages.js";
import { isEstimatedPrompt, promptSegments } from "../tokenizer.js";
import type { TokenSegments } from "./prefix-cache.js";

interface MessageTokens {
  segments: TokenSegments;
  estimated: boolean;
}

/**
 * Each message's part of a prompt, tokenized once per message object: a conversation's history is
 * the same objects from one call to the next (the runtime keeps it between rounds and turns), so a
 * call costs a lookup per message instead of re-reading every text of the history. Messages are
 * not changed once sent, which is what makes the object a safe key; a WeakMap lets them go (once
 * the conversation walks, conversation-walk.ts, have let go of them too).
 */
const byMessage = new WeakMap<ChatMessage, MessageTokens>();

/**
 * The closing "<|assistant|>" every prompt ends with (promptSegments' framing), encoded on first
 * use: at import it would load the tokenizer for every CLI command.
 */
let closing: readonly number[] | null = null;
export const closingSegment = (): readonly number[] => {
  closing ??= promptSegments([])[0] ?? [];
  return closing;
};

/** One message's prompt segments and whether the byte estimate counts any, from the cache. */
export function messageTokens(message: ChatMessage): MessageTokens {
  let tokens = byMessage.get(message);
  if (tokens === undefined) {
    // One message's texts, without the prompt's closing segment.
    tokens = {
      segments: promptSegments([message]).slice(0, -1),
      estimated: isEstimatedPrompt([message]),
    };
    byMessage.set(message, tokens);
  }
  return tokens;
}

/** `promptSegments(messages, toolsJson)`, message by message from the cache. */
export function messageSegments(
  messages: readonly ChatMessage[],
  toolsJson: string,
): TokenSegments {
  const segments: (readonly number[])[] = toolsJson
    ? promptSegments([], toolsJson).slice(0, -1)
    : [];
  for (const message of messages) {
    for (const segment of messageTokens(message).segments) segments.push(segment);
  }
  segments.push(closingSegment());
  return segments;
}

const jsonByMessage = new WeakMap<ChatMessage, string>();

/**
 * `JSON.stringify(messages)` in parts (join them for the text), message by message from a cache
 * (see `byMessage`): the same text, since an array's JSON is its elements' joined by commas.
 */
export function messagesJsonParts(messages: readonly ChatMessage[]): string[] {
  const parts = ["["];
  for (const [index, message] of messages.entries()) {
    if (index > 0) parts.push(",");
    parts.push(messageJson(message));
  }
  parts.push("]");
  return parts;
}

/** `JSON.stringify(message)`, once per message object. */
export function messageJson(message: ChatMessage): string {
  let json = jsonByMessage.get(message);
  if (json === undefined) {
    json = JSON.stringify(message);
    jsonByMessage.set(message, json);
  }
  return json;
}

/** `isEstimatedPrompt(messages, toolsJson)`, message by message from the cache. */
export function isEstimatedMessages(messages: readonly ChatMessage[], toolsJson: string): boolean {
  return (
    isEstimatedPrompt([], toolsJson) || messages.some((message) => messageTokens(message).estimated)
  );
}
