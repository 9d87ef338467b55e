/**
 * A simulated prompt prefix cache. Per conversation it remembers the token sequences of the last
 * few prompts; a new prompt's cached tokens are its longest common prefix with one of them. With
 * one caller per conversation that is exactly the prefix shared with the previous request; keeping
 * a few lets a chat agent and an event agent that share a model and a conversation not evict each
 * other, as a real cache would not. Bounded: least recently used conversations are forgotten.
 */
/** A prompt as token segments (one per text); the segments are shared, never changed. */
export type TokenSegments = readonly (readonly number[])[];

export class PrefixCache {
  readonly #conversations = new Map<string, TokenSegments[]>();

  constructor(
    readonly maxConversations = 256,
    readonly promptsPerConversation = 4,
  ) {}

  /** The cached-token count of `tokens` in `conversation`, then remembers `tokens`. */
  lookupAndStore(conversation: string, tokens: TokenSegments): number {
    const prompts = this.#conversations.get(conversation) ?? [];
    let cached = 0;
    for (const prompt of prompts) cached = Math.max(cached, commonSegmentPrefix(prompt, tokens));
    const kept = [tokens, ...prompts].slice(0, this.promptsPerConversation);
    this.#conversations.delete(conversation);
    this.#conversations.set(conversation, kept);
    if (this.#conversations.size > this.maxConversations) {
      const oldest = this.#conversations.keys().next();
      if (!oldest.done) this.#conversations.delete(oldest.value);
    }
    return cached;
  }
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
