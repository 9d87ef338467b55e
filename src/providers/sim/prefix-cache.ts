import type { ChatMessage } from "../../domain/messages.js";
import { messageSegments } from "./message-tokens.js";

/** A prompt as token segments (one per text); the segments are shared, never changed. */
export type TokenSegments = readonly (readonly number[])[];

/**
 * The simulated prompt cache: the cached tokens of a request are its common prefix with the
 * prompt the conversation's previous request must have had, which the request itself shows.
 * A conversation only grows by appending, and an assistant message is the answer to a request,
 * so the request that produced the *last* assistant message sent exactly the messages before it
 * (with the same tools and response format, which a session does not change). A real cache that
 * kept that prompt would find this prefix.
 *
 * A pure function of the request, on purpose: the same conversation gives the same numbers
 * whichever face ran it (`agent-lab chat` keeps one model for many turns, `agent-lab run` and the
 * HTTP server build one per turn) and whichever process. What follows from it:
 * - a round after tool calls (both modes) caches the previous round's whole prompt, and the first
 *   round of a next turn caches the previous turn's last round;
 * - a request without an assistant message is a conversation's first, and reads 0 cached: the
 *   first round of a session, and every event-agent (argument fallback) call, whose request is a
 *   system prompt and the user's words;
 * - a previous request that left no assistant message (cancelled before any output) is not seen:
 *   the estimate is low then, never high.
 */
export function cachedPromptTokens(
  messages: readonly ChatMessage[],
  toolsAndFormat: string,
  prompt: TokenSegments = messageSegments(messages, toolsAndFormat),
): number {
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  if (lastAssistant === -1) return 0;
  const previous = messageSegments(messages.slice(0, lastAssistant), toolsAndFormat);
  return commonSegmentPrefix(previous, prompt);
}

/**
 * The common prefix of two segmented prompts, in tokens, as if each were flattened. Equal segments
 * are usually the same array (the tokenizer's cache hands it out), which is skipped at once: a long
 * history costs one step per message, not one per token.
 */
export function commonSegmentPrefix(left: TokenSegments, right: TokenSegments): number {
  let common = 0;
  let leftIndex = 0;
  let rightIndex = 0;
  let leftOffset = 0;
  let rightOffset = 0;
  while (leftIndex < left.length && rightIndex < right.length) {
    const leftSegment = left[leftIndex] as readonly number[];
    const rightSegment = right[rightIndex] as readonly number[];
    if (leftSegment === rightSegment && leftOffset === 0 && rightOffset === 0) {
      common += leftSegment.length;
      leftIndex++;
      rightIndex++;
      continue;
    }
    if (leftOffset >= leftSegment.length) {
      leftIndex++;
      leftOffset = 0;
      continue;
    }
    if (rightOffset >= rightSegment.length) {
      rightIndex++;
      rightOffset = 0;
      continue;
    }
    if (leftSegment[leftOffset] !== rightSegment[rightOffset]) return common;
    common++;
    leftOffset++;
    rightOffset++;
  }
  return common;
}
