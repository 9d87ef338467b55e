/**
 * The client's side of a gateway turn's tool loop, as the turn keeps it: the calls the client was
 * handed, what its last follow-up replied to, and how long the turn waits for it to come back.
 */
export class ClientWait {
  /** How long a turn waits for the client to come back with its tools' replies. */
  readonly waitMs: number;
  readonly #passThrough: boolean;
  /** Ends the turn: the client did not come back in time. */
  readonly #abort: (reason: Error) => void;
  #waitTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * The ids of the tool calls the client got in its last answer (in pass-through as the upstream
   * wrote them, before the runtime has caught up with the bytes the client already read; while a
   * refused call waits for its retry, the calls the client still has): a follow-up that replies
   * to one belongs to this turn.
   */
  #handedOut = new Map<string, string>();
  /** Pass-through: replies that came before the runtime made their call (see takeReply). */
  readonly #earlyReplies = new Map<string, string>();
  /**
   * The calls the client had when it sent its last follow-up (id → arguments), for that
   * follow-up's retry (see refused).
   */
  #replied: ReadonlyMap<string, string> = new Map();
  /** A round's call failed before answering; the next follow-up is its retry. */
  #retrying = false;
  /**
   * Rendered: the ids the client's last follow-up replied to, which its retry repeats once a
   * refused call made the turn wait for it (pass-through knows them as handed out).
   */
  #replyIds: ReadonlySet<string> = new Set();

  constructor(options: { pass_through: boolean; wait_ms: number; abort: (reason: Error) => void }) {
    this.#passThrough = options.pass_through;
    this.waitMs = options.wait_ms;
    this.#abort = options.abort;
  }

  /** The calls the client got in its last answer, or holds while a retry is due (id → arguments). */
  get handedOut(): ReadonlyMap<string, string> {
    return this.#handedOut;
  }

  /** The turn waits for the client's retry of a follow-up whose call the upstream refused. */
  get retrying(): boolean {
    return this.#retrying;
  }

  /** Pass-through: the client got this call, as the upstream wrote it. */
  handOut(id: string, rawArguments: string): void {
    this.#handedOut.set(id, rawArguments);
  }

  /** True while the turn waits for the retry of a follow-up that replied to one of these calls. */
  awaitsRetryOf(ids: readonly string[]): boolean {
    return this.#retrying && ids.some((id) => this.#replyIds.has(id));
  }

  /**
   * A follow-up of this turn came, replying to `handedOut`: the client holds no calls now. True
   * when it is the retry of the follow-up whose call the upstream refused (the turn has its
   * replies already).
   */
  followedUp(
    handedOut: ReadonlyMap<string, string>,
    replies: readonly { tool_call_id: string }[],
  ): boolean {
    this.#handedOut = new Map();
    if (this.#retrying) {
      this.#retrying = false;
      return true;
    }
    this.#replied = handedOut;
    this.#replyIds = new Set(replies.map((reply) => reply.tool_call_id));
    return false;
  }

  /**
   * A follow-up's call the upstream refused before answering: the turn waits for the client's
   * retry of that follow-up, and the calls it had count as handed out again.
   */
  refused(): void {
    this.#retrying = true;
    this.#handedOut = new Map(this.#replied);
  }

  /**
   * The calls waiting for the client that these replies leave unanswered: `waiting`, the calls
   * at the bridge, and in pass-through those handed out.
   */
  unanswered(
    waiting: readonly { id: string }[],
    replies: readonly { tool_call_id: string }[],
  ): string[] {
    const replied = new Set([...replyIds(replies), ...replies.map((reply) => reply.tool_call_id)]);
    // Pass-through: the client has the calls as the upstream wrote them, often before the
    // runtime has reached them (the bridge is empty until it does).
    const expected = new Set(waiting.map((call) => call.id));
    if (this.#passThrough) for (const id of this.#handedOut.keys()) expected.add(id);
    return [...expected].filter((id) => !replied.has(id));
  }

  /** Pass-through: a reply whose call the runtime has not reached yet; it waits for the call. */
  holdReply(id: string, content: string): void {
    this.#earlyReplies.set(id, content);
  }

  /** The reply held for this call, if one came before it (see holdReply). */
  takeReply(id: string): string | undefined {
    const reply = this.#earlyReplies.get(id);
    if (reply !== undefined) this.#earlyReplies.delete(id);
    return reply;
  }

  /** The client has the calls; it must come back with their replies in time, or the turn ends. */
  awaitClient(): void {
    this.clearWait();
    this.#waitTimer = setTimeout(() => {
      this.#abort(
        new Error(
          `the client did not send the tool replies within ${this.waitMs} ms; the calls were answered "interrupted"`,
        ),
      );
    }, this.waitMs);
    this.#waitTimer.unref?.();
  }

  clearWait(): void {
    if (this.#waitTimer !== null) clearTimeout(this.#waitTimer);
    this.#waitTimer = null;
  }
}

/**
 * The call ids the replies answer, in order: an id the upstream repeated was renamed for its
 * second call on (`call_0`, then `call_0_2`), so its second reply answers that one.
 */
export function replyIds(replies: readonly { tool_call_id: string }[]): string[] {
  const seen = new Map<string, number>();
  return replies.map((reply) => {
    const count = (seen.get(reply.tool_call_id) ?? 0) + 1;
    seen.set(reply.tool_call_id, count);
    return count === 1 ? reply.tool_call_id : `${reply.tool_call_id}_${count}`;
  });
}
