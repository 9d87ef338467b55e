/**
 * A simulated prompt prefix cache. Per conversation it remembers the token sequences of the last
 * few prompts; a new prompt's cached tokens are its longest common prefix with one of them. With
 * one caller per conversation that is exactly the prefix shared with the previous request; keeping
 * a few lets a chat agent and an event agent that share a model and a conversation not evict each
 * other, as a real cache would not. Bounded: least recently used conversations are forgotten.
 */
export class PrefixCache {
  readonly #conversations = new Map<string, number[][]>();

  constructor(
    readonly maxConversations = 256,
    readonly promptsPerConversation = 4,
  ) {}

  /** The cached-token count of `tokens` in `conversation`, then remembers `tokens`. */
  lookupAndStore(conversation: string, tokens: readonly number[]): number {
    const prompts = this.#conversations.get(conversation) ?? [];
    let cached = 0;
    for (const prompt of prompts) cached = Math.max(cached, commonPrefixLength(prompt, tokens));
    const kept = [[...tokens], ...prompts].slice(0, this.promptsPerConversation);
    this.#conversations.delete(conversation);
    this.#conversations.set(conversation, kept);
    if (this.#conversations.size > this.maxConversations) {
      const oldest = this.#conversations.keys().next();
      if (!oldest.done) this.#conversations.delete(oldest.value);
    }
    return cached;
  }
}

export function commonPrefixLength(left: readonly number[], right: readonly number[]): number {
  const length = Math.min(left.length, right.length);
  let index = 0;
  while (index < length && left[index] === right[index]) index++;
  return index;
}
