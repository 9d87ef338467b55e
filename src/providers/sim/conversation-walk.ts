import type { ChatMessage } from "../../domain/messages.js";
import { isEstimatedPrompt, promptSegments } from "../tokenizer.js";
import { ConversationMemo } from "./conversation-memo.js";
import { closingSegment, messageJson, messageTokens } from "./message-tokens.js";
import { commonSegmentPrefix } from "./prefix-cache.js";

/** How many conversations' walks are remembered (least recently used go first)… */
const MAX_CONVERSATIONS = 64;
/** …and how many characters of their messages' JSON, all together (the newest is always kept). */
const MAX_KEPT_CHARS = 8_000_000;

/**
 * Running sums over a request's messages, entry i covering messages [0, i): what the prompt's
 * figures need without visiting the history again.
 */
interface Walk {
  /** The messages walked, by identity. */
  messages: ChatMessage[];
  /** Tokens of the messages' prompt segments (the closing segment not included). */
  tokens: number[];
  /** How many of them are counted by the byte estimate. */
  estimated: number[];
  /** Each message's JSON (not a sum: entry i is message i's). */
  json: string[];
  /** The characters of `json`, all together. */
  chars: number;
}

/** What the sim reports of a request's prompt. */
export interface PromptFigures {
  prompt_tokens: number;
  /** `cachedPromptTokens(messages, toolsAndFormat)`. */
  cached_tokens: number;
  /** `isEstimatedMessages(messages, toolsAndFormat)`. */
  estimated: boolean;
  /** `messagesJsonParts(messages)`: the messages' JSON in parts. */
  json_parts: string[];
}

/**
 * The prompt's figures for each request of a conversation, walking only what is new since its last
 * request: a conversation's next request repeats the last one's messages (the same objects, which
 * the runtime keeps between rounds and turns) and appends a few, so a call at turn 1,000 costs what
 * a call at turn 10 does, save one identity comparison per message (a message built again with
 * the same content, such as the runtime's system message, is compared by its JSON). The figures
 * are those of the whole-prompt functions (`countPromptTokens`, `cachedPromptTokens`,
 * `isEstimatedMessages`, `JSON.stringify`), tested equal over random conversations; a request
 * without a conversation id is walked from nothing. The walks hold their conversations' messages
 * until evicted: 64 conversations and 8 M characters of JSON at most, the newest always kept.
 */
export class ConversationWalks {
  readonly #walks = new ConversationMemo<Walk>(MAX_CONVERSATIONS, MAX_KEPT_CHARS);

  figures(
    conversationId: string | undefined,
    messages: readonly ChatMessage[],
    toolsAndFormat: string,
  ): PromptFigures {
    const walk = this.#walk(conversationId, messages);
    const tools = toolsSegments(toolsAndFormat);
    let toolsTokens = 0;
    for (const segment of tools) toolsTokens += segment.length;
    const count = messages.length;
    return {
      prompt_tokens: toolsTokens + (walk.tokens[count] as number) + closingSegment().length,
      cached_tokens: cachedTokens(walk, toolsTokens),
      estimated: isEstimatedPrompt([], toolsAndFormat) || (walk.estimated[count] as number) > 0,
      json_parts: jsonParts(walk.json),
    };
  }

  #walk(conversationId: string | undefined, messages: readonly ChatMessage[]): Walk {
    if (conversationId === undefined) return extend(undefined, messages);
    return this.#walks.update(conversationId, (last) => extend(last, messages));
  }
}

/** `last` cut back to the messages both share (by identity) and extended by the rest. */
function extend(last: Walk | undefined, messages: readonly ChatMessage[]): Walk {
  const walk = last ?? { messages: [], tokens: [0], estimated: [0], json: [], chars: 0 };
  let common = 0;
  const shared = Math.min(walk.messages.length, messages.length);
  while (common < shared && sameMessage(walk.messages[common], messages[common])) common++;
  for (let index = common; index < walk.json.length; index++) {
    walk.chars -= (walk.json[index] as string).length;
  }
  walk.messages.length = walk.json.length = common;
  walk.tokens.length = walk.estimated.length = common + 1;
  for (let index = common; index < messages.length; index++) {
    const message = messages[index] as ChatMessage;
    const tokens = messageTokens(message);
    let length = 0;
    for (const segment of tokens.segments) length += segment.length;
    walk.messages.push(message);
    const json = messageJson(message);
    walk.json.push(json);
    walk.chars += json.length;
    walk.tokens.push((walk.tokens[index] as number) + length);
    walk.estimated.push((walk.estimated[index] as number) + (tokens.estimated ? 1 : 0));
  }
  return walk;
}

/**
 * The same object, or one written again with the same content: the runtime builds its system
 * message anew for each request, and would otherwise make every request a walk from the start.
 */
function sameMessage(walked: ChatMessage | undefined, given: ChatMessage | undefined): boolean {
  if (walked === given) return true;
  if (walked === undefined || given === undefined || walked.role !== given.role) return false;
  return messageJson(walked) === messageJson(given);
}

/**
 * `cachedPromptTokens` from the sums: the previous request's prompt is this one's up to its last
 * assistant message, then the closing segment, so the common prefix is the tools and every message
 * before that one, and whatever of the closing segment the rest begins with.
 */
function cachedTokens(walk: Walk, toolsTokens: number): number {
  const { messages } = walk;
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  if (lastAssistant === -1) return 0;
  const closing = closingSegment();
  const rest: (readonly number[])[] = [];
  let restTokens = 0;
  for (let index = lastAssistant; index < messages.length && restTokens < closing.length; index++) {
    for (const segment of messageTokens(messages[index] as ChatMessage).segments) {
      rest.push(segment);
      restTokens += segment.length;
    }
  }
  rest.push(closing);
  return (
    toolsTokens + (walk.tokens[lastAssistant] as number) + commonSegmentPrefix([closing], rest)
  );
}

/** The tools' and response format's segments (before the messages), by the prompt's framing. */
function toolsSegments(toolsAndFormat: string): readonly (readonly number[])[] {
  return toolsAndFormat ? promptSegments([], toolsAndFormat).slice(0, -1) : [];
}

/** `JSON.stringify(messages)` in parts (their texts joined): "[", the JSONs comma-separated, "]". */
function jsonParts(json: readonly string[]): string[] {
  const parts = ["["];
  for (const [index, text] of json.entries()) {
    if (index > 0) parts.push(",");
    parts.push(text);
  }
  parts.push("]");
  return parts;
}
