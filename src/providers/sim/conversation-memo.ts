/**
 * Per conversation id, what its last request left for the next one (the sim's request digests and
 * prompt walks), in one process for every sim model: a server builds one per turn. The least
 * recently used conversations go first once there are more than `maxConversations` or their
 * sizes pass `maxChars` together; the one just updated is always kept.
 */
export class ConversationMemo<Entry extends { readonly chars: number }> {
  readonly #entries = new Map<string, Entry>();
  #chars = 0;

  constructor(
    private readonly maxConversations: number,
    private readonly maxChars: number,
  ) {}

  /**
   * The conversation's new entry, made by `next` from its last one (which `next` may change in
   * place and return: its size is counted again once it is made).
   */
  update(conversationId: string, next: (last: Entry | undefined) => Entry): Entry {
    const last = this.#entries.get(conversationId);
    if (last !== undefined) {
      this.#entries.delete(conversationId);
      this.#chars -= last.chars;
    }
    const entry = next(last);
    this.#entries.set(conversationId, entry);
    this.#chars += entry.chars;
    for (const [oldest, kept] of this.#entries) {
      const over = this.#entries.size > this.maxConversations || this.#chars > this.maxChars;
      if (!over || kept === entry) break;
      this.#entries.delete(oldest);
      this.#chars -= kept.chars;
    }
    return entry;
  }
}
