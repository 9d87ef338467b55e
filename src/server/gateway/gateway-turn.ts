import type { RequestMessage } from "../../domain/gateway.js";
import { runTurn } from "../../runtime/run-turn.js";
import type { SessionStore } from "../../store/session-store.js";
import { ClientToolBridge } from "./client-tools.js";
import { ClientWait, replyIds } from "./client-wait.js";
import { WatchedModel } from "./gateway-models.js";
import type { GatewaySegment } from "./gateway-segment.js";
import type { FollowUpSettings, GatewayTurnSetup, SegmentRequest } from "./gateway-turn-setup.js";
import { saidOf, type ToolReply } from "./request-messages.js";
import { SegmentWriter } from "./segment-writer.js";
import { UpstreamCalls } from "./upstream-calls.js";

export type { FollowUpSettings, GatewayTurnSetup, SegmentRequest } from "./gateway-turn-setup.js";
export { GatewayTurnEnded } from "./turn-end.js";

/**
 * One turn of a gateway session, run by the lab's own runtime (runTurn), so it is recorded exactly
 * as a native turn is: the user message, each round's assistant message and tool replies, every
 * call's usage, TTFT and latency, the audit trail. What differs is who runs the tools: the client.
 * Each of its requests opens a segment (an HTTP response); the turn writes into the current one.
 */
export class GatewayTurn {
  readonly session_id: string;
  /** What the first request's messages say (`saidOf`), in order. */
  readonly #opening: readonly string[];
  /** The user message that started the turn, as it records it. */
  readonly #message: string;
  readonly #controller = new AbortController();
  readonly #bridge: ClientToolBridge;
  readonly #wait: ClientWait;
  readonly #upstream: UpstreamCalls;
  readonly #chat: WatchedModel;
  readonly #event: WatchedModel;
  readonly #writer: SegmentWriter;
  readonly #passThrough: boolean;
  #segment: GatewaySegment;
  /** Why the turn ends at its next model call: the client went on (see endWith). */
  #ending: Error | null = null;
  #ended = false;
  readonly #store: SessionStore;
  readonly done: Promise<void>;

  constructor(setup: GatewayTurnSetup, first: SegmentRequest) {
    this.session_id = setup.session_id;
    this.#opening = setup.opening.map(saidOf);
    this.#message = setup.message;
    this.#passThrough = setup.pass_through;
    this.#segment = this.#adopt(first.segment);
    this.#store = setup.store;
    this.#wait = new ClientWait({
      pass_through: setup.pass_through,
      wait_ms: setup.client_wait_ms,
      abort: (reason) => this.#controller.abort(reason),
    });
    this.#upstream = new UpstreamCalls({
      model: setup.chat_model,
      signal: this.#controller.signal,
      wait: this.#wait,
      segment: () => this.#segment,
      beforeCall: () => this.#stopIfEnding(),
    });
    // Pass-through: the upstream call starts first (before anything else is built) and the lab's
    // setup (the session, the claim) waits for its first bytes, so the client's first token is
    // the upstream's, not delayed by the lab's own writes (which run while the model goes on).
    const startedAt = performance.now();
    const early = setup.pass_through
      ? this.#upstream.startEarly(setup.message, first.body, setup.tapped_fetch)
      : null;
    this.#bridge = new ClientToolBridge(setup.tools, {
      validate: !setup.pass_through,
      // The client-side wait is timed by the turn (see ClientWait.awaitClient), not per call.
      timeout_ms: Number.POSITIVE_INFINITY,
      onCall: (call) => this.#writer.onClientCall(call),
    });
    this.#chat = setup.pass_through
      ? new WatchedModel(setup.chat_model, (request, options) =>
          this.#upstream.passThroughCall(request, options),
        )
      : new WatchedModel(
          setup.chat_model,
          (request, options) => this.#upstream.renderedCall(request, options),
          // A streamed answer's chunks name the model that serves it, as the JSON answer does.
          (model) => this.#segment.servedBy(model),
        );
    this.#event = new WatchedModel(setup.event_model);
    this.#writer = new SegmentWriter({
      segment: () => this.#segment,
      pass_through: setup.pass_through,
      parallel_tool_calls: setup.parallel_tool_calls,
      bridge: this.#bridge,
      wait: this.#wait,
      chat: this.#chat,
      event: this.#event,
    });
    // A macrotask later, so the server has written the response's head and first bytes.
    const running =
      early === null
        ? this.#run(setup, startedAt)
        : early.answered
            .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
            .then(() => this.#run(setup, startedAt));
    this.done = running.finally(() => {
      this.#ended = true;
      // A turn refused or ended before it asked for its first call does not leave it running.
      this.#upstream.abortEarly(new Error("the turn ended before its first call"));
      this.#wait.clearWait();
      setup.onEnd();
    });
  }

  /** The turn's answer once it completed, for grouping the conversation's next request. */
  get answer(): string | null {
    return this.#writer.answer;
  }

  /** The client has its answer and the turn waits for the client's next request. */
  get awaitingClient(): boolean {
    return !this.#ended && this.#segment.ended;
  }

  /**
   * True when the turn waits for the replies of these calls: at the bridge, or (pass-through)
   * handed to the client in its last answer, whether the runtime has reached them yet or not.
   */
  waitsFor(ids: readonly string[]): boolean {
    if (ids.some((id) => this.#bridge.has(id))) return true;
    if (this.#wait.awaitsRetryOf(ids)) return !this.#ended;
    return this.#passThrough && !this.#ended && ids.some((id) => this.#wait.handedOut.has(id));
  }

  /**
   * How many messages of `messages` are this turn's first request's, when they begin with them as
   * a client's follow-up does (else -1): tells apart turns of different conversations waiting for
   * calls of the same ids (a dual_agent turn's `evt_1_1_1`, an upstream that numbers its calls
   * `call_0`). The first request's messages are held while the turn lives, as its body is.
   */
  opensWith(messages: readonly RequestMessage[]): number {
    const opening = this.#opening;
    if (messages.length <= opening.length) return -1;
    const same = opening.every((said, index) => said === saidOf(messages[index] as RequestMessage));
    return same ? opening.length : -1;
  }

  /**
   * Whether a follow-up's messages may be this turn's by what they say last: its last user
   * message is the one that started the turn, or it has none (a client that trimmed its history
   * down to the tool loop). A follow-up of another conversation whose calls have the same ids
   * and arguments (an upstream that numbers its calls from `call_0`) carries its own.
   */
  startedBy(lastUserMessage: string | null): boolean {
    return lastUserMessage === null || lastUserMessage === this.#message;
  }

  /**
   * True when the calls the client says it got (the follow-up's last assistant `tool_calls`) are
   * this turn's last calls, arguments and all, as far as the turn has read them: tells apart twin
   * conversations (the same first messages) whose answers differ under the same call ids.
   */
  handedOut(calls: readonly { id: string; arguments: string }[]): boolean {
    // As the client got them: in pass-through, the upstream's own as its bytes went out (the
    // runtime may not have read them yet), else as the lab validated them; while the turn waits
    // for a retry, those of the follow-up that failed.
    const mine =
      this.#passThrough || this.#wait.retrying ? this.#wait.handedOut : this.#writer.atClient();
    const compared = calls.filter((call) => mine.has(call.id));
    return compared.length > 0 && compared.every((call) => mine.get(call.id) === call.arguments);
  }

  /**
   * The calls waiting for the client that these replies leave unanswered: a follow-up answers
   * every call of the answer it continues (OpenAI refuses one that does not), and a turn left
   * waiting for a reply that is not coming would hold the client until the wait runs out.
   */
  unanswered(replies: readonly { tool_call_id: string }[]): string[] {
    return this.#wait.unanswered(this.#bridge.waiting(), replies);
  }

  /**
   * A follow-up request: its tool replies go to the calls waiting for them and the turn goes on
   * into its segment. A reply to an id the upstream repeated goes to the next of its renamed
   * calls (`call_0`, then `call_0_2`); replies to calls nobody waits for are ignored. False when
   * the request is not this turn's.
   */
  continueWith(
    request: SegmentRequest,
    replies: readonly ToolReply[],
    settings: FollowUpSettings | null = null,
  ): boolean {
    if (!this.waitsFor(replies.map((reply) => reply.tool_call_id))) return false;
    this.#segment = this.#adopt(request.segment);
    if (settings !== null && !this.#passThrough) {
      this.#upstream.sampling = settings.sampling;
      this.#writer.parallelCalls = settings.parallel_tool_calls;
      this.#recordSettings(settings);
    }
    const handedOut = this.#clientCalls();
    this.#writer.newRound();
    if (this.#wait.followedUp(handedOut, replies)) {
      // The same replies again, for the call that failed: its body is the next attempt's.
      this.#upstream.pushBody(request.body);
      return true;
    }
    if (this.#passThrough) this.#upstream.pushBody(request.body);
    else this.#upstream.expectReplies();
    this.#deliver(replies, handedOut);
    // Until the turn moves on (all replies in), it waits for the client as before.
    this.#wait.awaitClient();
    return true;
  }

  /**
   * The client answered this turn's calls and went on with a new user message in the same
   * request: the replies are the calls' results, and the turn ends (cancelled: the client ended
   * it, not the model) where it would call the model again, before it does. The request is the
   * next turn's. Before, the replies were dropped and the calls answered "interrupted", so a
   * rendered session's next turn sent the model that instead of the client's results.
   */
  async endWith(replies: readonly ToolReply[], reason: string): Promise<void> {
    this.#ending = new Error(reason);
    if (this.#wait.retrying || this.#upstream.waitsForBody) {
      // A call waits for the client's retry of a follow-up the upstream refused (whose replies
      // the turn has): the retry will not come, so the turn ends now, not after the retry wait.
      this.#controller.abort(this.#ending);
    } else {
      this.#deliver(replies, this.#clientCalls());
    }
    await this.done;
  }

  /** The calls the client got in its last answer: id → arguments (pass-through: as written). */
  #clientCalls(): ReadonlyMap<string, string> {
    return this.#passThrough ? this.#wait.handedOut : this.#writer.atClient();
  }

  /**
   * Each reply to the call waiting for it; a reply to an id the upstream repeated goes to the
   * next of its renamed calls (`call_0`, then `call_0_2`).
   */
  #deliver(replies: readonly ToolReply[], handedOut: ReadonlyMap<string, string>): void {
    const ids = replyIds(replies);
    for (const [index, reply] of replies.entries()) {
      const id = ids[index] as string;
      if (this.#bridge.answer(id, reply.content)) continue;
      // Pass-through: the runtime has not reached this call yet; it is answered when it does.
      if (this.#passThrough && handedOut.has(reply.tool_call_id)) {
        this.#wait.holdReply(id, reply.content);
      }
    }
  }

  /** A turn the client ended (see endWith) calls the model no more: it ends there, cancelled. */
  #stopIfEnding(): void {
    const ending = this.#ending;
    if (ending === null) return;
    this.#controller.abort(ending);
    throw ending;
  }

  /**
   * The turn_start row holds the first request's settings; each follow-up's are recorded beside
   * the rounds they apply to. A store that refuses the row refuses the turn's next write as well,
   * which ends the turn: nothing to add here.
   */
  #recordSettings(settings: FollowUpSettings): void {
    const turnIndex = this.#writer.turnIndex;
    if (turnIndex === null) return;
    const details = {
      chat_sampling: settings.sampling,
      parallel_tool_calls: settings.parallel_tool_calls,
    };
    void Promise.resolve()
      .then(() =>
        this.#store.appendAudit(this.session_id, {
          event: "gateway_follow_up",
          details,
          turn_index: turnIndex,
        }),
      )
      .catch(() => {});
  }

  #adopt(segment: GatewaySegment): GatewaySegment {
    segment.adopt({
      pass_through: this.#passThrough,
      onDisconnect: () => {
        this.#controller.abort(new Error("the client closed the connection"));
      },
    });
    return segment;
  }

  /** Stops the turn (the client went away, or moved on without the replies) and waits for its end. */
  async cancel(reason: string): Promise<void> {
    this.#controller.abort(new Error(reason));
    await this.done;
  }

  /** `startedAt`: when the request arrived (pass-through's first call started then). */
  async #run(setup: GatewayTurnSetup, startedAt: number): Promise<void> {
    const bridge = this.#bridge;
    const events = runTurn({
      started_at: startedAt,
      store: setup.store,
      session_id: setup.session_id,
      title: setup.title,
      config: setup.config,
      chat_sampling: setup.chat_sampling,
      message: setup.message,
      signal: this.#controller.signal,
      providers: { models: setup.models, tools: { toolsFor: async () => bridge.registry } },
      models: { chat: this.#chat, event: this.#event },
    });
    try {
      for await (const event of events) this.#writer.onEvent(event);
    } catch (error) {
      // Refused before it started (a turn already running, a mode the session does not have).
      this.#segment.fail(error);
    }
  }

  /** Pass-through sends each request's body upstream as written: no settings of the lab's apply. */
  get passesThrough(): boolean {
    return this.#passThrough;
  }
}
