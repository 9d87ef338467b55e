import { AgentLabError } from "../../domain/errors.js";
import type { RequestMessage, RequestTool } from "../../domain/gateway.js";
import { redactSecretText } from "../../domain/secrets.js";
import type { LabSessionConfigInput } from "../../domain/session-config.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../../providers/chat-model.js";
import { ProviderApiError, ProviderConnectionError } from "../../providers/errors.js";
import { batchesOf, PartStream } from "../../providers/part-stream.js";
import { requestWithSampling, type SamplingSettings } from "../../runtime/modes/agent-sampling.js";
import { runTurn } from "../../runtime/run-turn.js";
import type { ModelProvider } from "../../runtime/turn-providers.js";
import type { SessionStore } from "../../store/session-store.js";
import { type ClientCall, ClientToolBridge } from "./client-tools.js";
import { EarlyCall, WatchedModel } from "./gateway-models.js";
import type { GatewaySegment, SegmentFinish } from "./gateway-segment.js";
import { saidOf, type ToolReply } from "./request-messages.js";
import type { TappedFetch } from "./upstream-fetch.js";

/**
 * One turn of a gateway session, run by the lab's own runtime (runTurn), so it is recorded exactly
 * as a native turn is: the user message, each round's assistant message and tool replies, every
 * call's usage, TTFT and latency, the audit trail. What differs is who runs the tools: the client.
 * Each of its requests opens a segment (an HTTP response); the turn writes into the current one.
 */
export interface GatewayTurnSetup {
  store: SessionStore;
  session_id: string;
  /** For a new session. */
  title: string;
  config: LabSessionConfigInput;
  /** The request's sampling settings: this turn's, whatever the session's first request said. */
  chat_sampling: SamplingSettings;
  /**
   * False when the request said `parallel_tool_calls: false`: when the lab writes the model's
   * request itself, the client gets one call per answer (see #onClientCall).
   */
  parallel_tool_calls: boolean;
  message: string;
  chat_model: ChatModel;
  /**
   * Pass-through: a fetch for the turn's first call that tells `tap` of each read of the
   * upstream's answer as it arrives, so the client's first bytes do not wait for the adapter.
   */
  tapped_fetch?: TappedFetch;
  event_model: ChatModel;
  models: ModelProvider;
  tools: readonly RequestTool[];
  /** The first request's messages: a follow-up of this turn resends them first. */
  opening: readonly RequestMessage[];
  /**
   * Pass-through: each upstream call sends the client's own request body, and a streaming client
   * gets the upstream's bytes as they are. Else the lab runs the mode and renders the answer.
   */
  pass_through: boolean;
  /** How long a turn waits for the client to come back with its tools' replies. */
  client_wait_ms: number;
  /** The turn is over (ended, failed or cancelled): the session may start another. */
  onEnd(): void;
}

/** A client request that a model call of the turn answers (pass-through sends its body). */
export interface SegmentRequest {
  segment: GatewaySegment;
  body: Record<string, unknown>;
}

/**
 * A follow-up's own settings, when the lab writes the model's request itself: the call that
 * answers it (and the rounds after) go as that request asked, as its upstream would take them.
 */
export interface FollowUpSettings {
  sampling: SamplingSettings;
  parallel_tool_calls: boolean;
}

export class GatewayTurn {
  readonly session_id: string;
  /** What the first request's messages say (`saidOf`), in order. */
  readonly #opening: readonly string[];
  /** The user message that started the turn, as it records it. */
  readonly #message: string;
  readonly #controller = new AbortController();
  readonly #bridge: ClientToolBridge;
  readonly #chat: WatchedModel;
  readonly #event: WatchedModel;
  readonly #passThrough: boolean;
  readonly #clientWaitMs: number;
  #segment: GatewaySegment;
  /** Pass-through: the requests whose body the next model call sends, oldest first. */
  readonly #bodies: Record<string, unknown>[] = [];
  #bodyArrived: (() => void) | null = null;
  /** Pass-through: the turn's first call, started before the runtime asks for it. */
  #early: EarlyCall | null = null;
  /** Rendered segments: the current round's calls and where each stands. */
  #round = newRoundWatch();
  /**
   * Pass-through: the ids of the tool calls the client got in its last answer, as the upstream
   * wrote them; a follow-up that replies to one belongs to this turn, even before the runtime
   * has caught up with the bytes the client already read.
   */
  #handedOut = new Map<string, string>();
  /** Pass-through: replies that came before the runtime made their call (see #onClientCall). */
  readonly #earlyReplies = new Map<string, string>();
  /**
   * Pass-through: the calls the client had when it sent its last follow-up (id → arguments), for
   * that follow-up's retry (see #retriedBatches).
   */
  #replied: ReadonlyMap<string, string> = new Map();
  /** A round's call failed before answering; the next follow-up is its retry. */
  #retrying = false;
  /**
   * Rendered: the ids the client's last follow-up replied to, which its retry repeats once a
   * refused call made the turn wait for it (pass-through knows them as handed out).
   */
  #replyIds: ReadonlySet<string> = new Set();
  /** Rendered: the next chat call answers a follow-up (see #renderedCall). */
  #afterReplies = false;
  #waitTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * Rendered segments: where text was last written. A round that follows one whose calls the lab
   * answered itself (dual_agent arguments beyond repair) writes into the same answer, and its text
   * must not run on from the last round's ("One moment.Hello").
   */
  #lastText: { segment: GatewaySegment; round: RoundWatch; sent: string } | null = null;
  /** The turn's `error` event, for a failure no upstream explains. */
  #failure: { code: string; message: string } | null = null;
  /** Why the turn ends at its next model call: the client went on (see endWith). */
  #ending: Error | null = null;
  /** How the chat agent's last round ended, as its endpoint said. */
  #lastFinish: string | null = null;
  #ended = false;
  /** The latest follow-up's sampling; null: the turn's own (its first request's). */
  #sampling: SamplingSettings | null = null;
  #parallelCalls: boolean;
  readonly #store: SessionStore;
  /** The turn's index, once it has started. */
  #turnIndex: number | null = null;
  /** The turn's answer once it completed, for grouping the conversation's next request. */
  answer: string | null = null;
  readonly done: Promise<void>;

  constructor(setup: GatewayTurnSetup, first: SegmentRequest) {
    this.session_id = setup.session_id;
    this.#opening = setup.opening.map(saidOf);
    this.#message = setup.message;
    this.#passThrough = setup.pass_through;
    this.#segment = this.#adopt(first.segment);
    this.#clientWaitMs = setup.client_wait_ms;
    this.#parallelCalls = setup.parallel_tool_calls;
    this.#store = setup.store;
    // Pass-through: the upstream call starts first (before anything else is built) and the lab's
    // setup (the session, the claim) waits for its first bytes, so the client's first token is
    // the upstream's, not delayed by the lab's own writes (which run while the model goes on).
    const startedAt = performance.now();
    const early = setup.pass_through ? this.#startEarly(setup, first.body) : null;
    this.#early = early;
    this.#bridge = new ClientToolBridge(setup.tools, {
      validate: !setup.pass_through,
      // The client-side wait is timed by the turn (see #awaitClient), not per call.
      timeout_ms: Number.POSITIVE_INFINITY,
      onCall: (call) => this.#onClientCall(call),
    });
    this.#chat = setup.pass_through
      ? new WatchedModel(setup.chat_model, (request, options) =>
          this.#passThroughCall(request, options),
        )
      : new WatchedModel(
          setup.chat_model,
          (request, options) => this.#renderedCall(request, options),
          // A streamed answer's chunks name the model that serves it, as the JSON answer does.
          (model) => this.#segment.servedBy(model),
        );
    this.#event = new WatchedModel(setup.event_model);
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
      this.#early?.abort(new Error("the turn ended before its first call"));
      this.#clearWait();
      setup.onEnd();
    });
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
    if (this.#retrying && ids.some((id) => this.#replyIds.has(id))) return !this.#ended;
    return this.#passThrough && !this.#ended && ids.some((id) => this.#handedOut.has(id));
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
    const mine = this.#passThrough || this.#retrying ? this.#handedOut : atClient(this.#round);
    const compared = calls.filter((call) => mine.has(call.id));
    return compared.length > 0 && compared.every((call) => mine.get(call.id) === call.arguments);
  }

  /**
   * The calls waiting for the client that these replies leave unanswered: a follow-up answers
   * every call of the answer it continues (OpenAI refuses one that does not), and a turn left
   * waiting for a reply that is not coming would hold the client until the wait runs out.
   */
  unanswered(replies: readonly { tool_call_id: string }[]): string[] {
    const replied = new Set([...replyIds(replies), ...replies.map((reply) => reply.tool_call_id)]);
    // Pass-through: the client has the calls as the upstream wrote them, often before the
    // runtime has reached them (the bridge is empty until it does).
    const expected = new Set(this.#bridge.waiting().map((call) => call.id));
    if (this.#passThrough) for (const id of this.#handedOut.keys()) expected.add(id);
    return [...expected].filter((id) => !replied.has(id));
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
      this.#sampling = settings.sampling;
      this.#parallelCalls = settings.parallel_tool_calls;
      this.#recordSettings(settings);
    }
    const handedOut = this.#passThrough ? this.#handedOut : atClient(this.#round);
    this.#round = newRoundWatch();
    this.#handedOut = new Map();
    if (this.#retrying) {
      // The same replies again, for the call that failed: its body is the next attempt's.
      this.#retrying = false;
      this.#pushBody(request.body);
      return true;
    }
    this.#replied = handedOut;
    this.#replyIds = new Set(replies.map((reply) => reply.tool_call_id));
    if (this.#passThrough) this.#pushBody(request.body);
    else this.#afterReplies = true;
    this.#deliver(replies, handedOut);
    // Until the turn moves on (all replies in), it waits for the client as before.
    this.#awaitClient();
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
    if (this.#retrying || this.#bodyArrived !== null) {
      // A call waits for the client's retry of a follow-up the upstream refused (whose replies
      // the turn has): the retry will not come, so the turn ends now, not after the retry wait.
      this.#controller.abort(this.#ending);
    } else {
      this.#deliver(replies, this.#passThrough ? this.#handedOut : atClient(this.#round));
    }
    await this.done;
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
        this.#earlyReplies.set(id, reply.content);
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
    const turnIndex = this.#turnIndex;
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
      for await (const event of events) this.#onEvent(event);
    } catch (error) {
      // Refused before it started (a turn already running, a mode the session does not have).
      this.#segment.fail(error);
    }
  }

  #onEvent(event: TurnEvent): void {
    const segment = this.#segment;
    switch (event.type) {
      case "text_delta":
        if (!segment.forwardsBytes) this.#text(segment, event.text);
        return;
      case "reasoning_delta":
        if (!segment.forwardsBytes) segment.reasoning(event.text);
        return;
      case "refusal_delta":
        if (!segment.forwardsBytes) segment.refusal(event.text);
        return;
      case "round_end":
        this.#lastFinish = event.finish_reason;
        return;
      case "round_start":
        // The turn moves on: nothing waits for the client now.
        this.#clearWait();
        this.#round = newRoundWatch();
        return;
      case "tool_call": {
        const { id, name, raw_arguments } = event.event;
        this.#round.calls.set(id, { id, name, arguments: raw_arguments });
        if (this.#passThrough) this.#handedOut.set(id, event.event.raw_arguments);
        this.#checkHandOver();
        return;
      }
      case "tool_result":
        this.#round.settled.add(event.event_id);
        this.#checkHandOver();
        return;
      case "usage":
        if (event.agent !== "event_kernel") segment.usage(event.usage);
        if (event.agent === "chat_agent" && event.call_kind === "chat_completion") {
          if (event.response_model !== null) segment.servedBy(event.response_model);
          this.#round.model_done = true;
          this.#checkHandOver();
        }
        return;
      case "error":
        this.#failure = { code: event.code, message: event.message };
        return;
      case "turn_end":
        this.#endTurn(event);
        return;
      case "turn_start":
        this.#turnIndex = event.turn_index;
        return;
      // The client sees none of these: its own protocol has no place for them.
      case "retry":
      case "fallback_start":
      case "fallback_end":
      case "approval_required":
      case "approval_decided":
        return;
      default:
        // A new event type fails to compile here until the gateway decides what to forward.
        event satisfies never;
    }
  }

  #text(segment: GatewaySegment, text: string): void {
    const last = this.#lastText;
    let sent = last !== null && last.segment === segment ? last.sent : "";
    if (last !== null && last.segment === segment && last.round !== this.#round) {
      segment.text("\n\n");
      sent += "\n\n";
    }
    this.#lastText = { segment, round: this.#round, sent: sent + text };
    segment.text(text);
  }

  #endTurn(event: Extract<TurnEvent, { type: "turn_end" }>): void {
    if (event.status === "completed") {
      // What the client read is what its next request carries as the last answer (several
      // rounds' texts, in a rendered answer that went on past calls the lab answered itself).
      const last = this.#lastText;
      this.answer = last !== null && last.segment === this.#segment ? last.sent : event.answer;
    }
    const segment = this.#segment;
    // Ended already: the client has its answer. A turn the lab failed to record after that is
    // for the segment to report (HttpSegment.fail logs it when the answer went out whole).
    if (segment.ended && event.status !== "failed") return;
    if (event.status === "completed" || event.status === "max_rounds") {
      // A forwarding segment ended with the upstream's own last bytes.
      if (!segment.forwardsBytes) {
        segment.finish(
          event.status === "completed" ? answerFinish(this.#lastFinish) : "length",
          [],
        );
      }
      return;
    }
    segment.fail(
      this.#chat.lastError ??
        this.#event.lastError ??
        new GatewayTurnEnded(
          event.status,
          this.#failure?.message ?? "no reason given",
          this.#failure?.code === "storage_failed",
        ),
    );
  }

  #onClientCall(call: ClientCall): void {
    const early = this.#earlyReplies.get(call.id);
    if (early !== undefined) {
      this.#earlyReplies.delete(call.id);
      this.#bridge.answer(call.id, early);
      return;
    }
    // A client that takes one call at a time gets the round's first; the model reads why the
    // others were not run and may make them again once it has that one's result.
    const [first] = this.#round.at_client.values();
    if (!this.#passThrough && !this.#parallelCalls && first !== undefined) {
      this.#bridge.refuse(
        call.id,
        `not run: the client takes one tool call at a time (parallel_tool_calls: false); call ${call.name} again once ${first.name} has answered`,
      );
      return;
    }
    this.#round.at_client.set(call.id, call);
    this.#checkHandOver();
  }

  /**
   * A rendered segment ends once the model's part of the round is over and its calls are out:
   * checked on the next turn of the event loop, so every call of the round has been dispatched.
   * Pass-through hands the client the calls as the model wrote them. Otherwise the client gets the
   * calls that wait for it (validated, in dual_agent perhaps repaired), once every call is either
   * waiting or answered already (an unknown tool, arguments beyond repair); with none left for the
   * client the turn simply goes on into the same segment.
   */
  #checkHandOver(): void {
    if (this.#segment.forwardsBytes) return;
    const round = this.#round;
    const segment = this.#segment;
    setImmediate(() => {
      if (segment !== this.#segment || segment.ended || !round.model_done) return;
      if (this.#passThrough) {
        // Every call the model wrote goes to the client, even those the lab answered itself
        // (its next request carries the body of the next call): the round may be over already.
        if (round.calls.size === 0) return;
        segment.finish("tool_calls", [...round.calls.values()]);
        this.#awaitClient();
        return;
      }
      if (round !== this.#round || round.at_client.size === 0) return;
      for (const id of round.calls.keys()) {
        if (!round.at_client.has(id) && !round.settled.has(id)) return;
      }
      segment.finish("tool_calls", [...round.at_client.values()]);
      this.#awaitClient();
    });
  }

  /** Pass-through sends each request's body upstream as written: no settings of the lab's apply. */
  get passesThrough(): boolean {
    return this.#passThrough;
  }

  /** The client has the calls; it must come back with their replies in time, or the turn ends. */
  #awaitClient(): void {
    this.#clearWait();
    this.#waitTimer = setTimeout(() => {
      this.#controller.abort(
        new Error(
          `the client did not send the tool replies within ${this.#clientWaitMs} ms; the calls were answered "interrupted"`,
        ),
      );
    }, this.#clientWaitMs);
    this.#waitTimer.unref?.();
  }

  #clearWait(): void {
    if (this.#waitTimer !== null) clearTimeout(this.#waitTimer);
    this.#waitTimer = null;
  }

  #pushBody(body: Record<string, unknown>): void {
    this.#bodies.push(body);
    const arrived = this.#bodyArrived;
    this.#bodyArrived = null;
    arrived?.();
  }

  /**
   * The first upstream call starts with the request (see EarlyCall): the runtime attaches to it
   * when its first round calls the model.
   */
  #startEarly(setup: GatewayTurnSetup, body: Record<string, unknown>): EarlyCall {
    // The call answers this request: its bytes go to this segment, whatever comes next.
    const segment = this.#segment;
    const forward = (piece: Uint8Array) => {
      if (segment.forwardsBytes) segment.bytes(piece);
    };
    // Tapped, the bytes go to the client as they arrive, not once the adapter has read them.
    const fetch = setup.tapped_fetch?.({ bytes: forward });
    return new EarlyCall(
      setup.chat_model,
      { messages: [{ role: "user", content: setup.message, tool_calls: [] }] },
      {
        raw_body: body,
        signal: this.#controller.signal,
        bytes: fetch === undefined ? forward : () => {},
        ...(fetch === undefined ? {} : { fetch }),
        toolCall: (id, rawArguments) => this.#handedOut.set(id, rawArguments),
        ended: () => this.#endForwarding(segment),
      },
    );
  }

  /**
   * Each upstream call answers one client request and sends that request's body: the first is the
   * early call, a later round the follow-up's (which it waits for, as the client decides when to
   * come back). Every read of the response goes to the current segment too.
   */
  async #passThroughCall(
    request: ChatModelRequest,
    options: StreamOptions,
  ): Promise<AsyncIterable<ChatModelPart>> {
    this.#stopIfEnding();
    const early = this.#early;
    if (early !== null) {
      this.#early = null;
      return early.attach(options);
    }
    return new PartStream(this.#retriedBatches(request, options));
  }

  /**
   * A follow-up's call the upstream refused before answering: the client hears the refusal as
   * the upstream's, and the turn waits for its retry of that follow-up (the calls it had count
   * as handed out again).
   */
  #refused(segment: GatewaySegment, error: unknown): void {
    segment.fail(error);
    this.#retrying = true;
    this.#handedOut = new Map(this.#replied);
  }

  /**
   * Rendered (dual_agent, sim): the call that answers a follow-up is retried the client's way when
   * the upstream refuses it (after the adapter's own retries), as in pass-through: the follow-up
   * fails with the upstream's error and the client's retry of it makes the next attempt. Other
   * calls (the turn's first, the rounds the lab goes on with itself) go as they are.
   */
  async #renderedCall(
    request: ChatModelRequest,
    options: StreamOptions,
  ): Promise<AsyncIterable<ChatModelPart>> {
    this.#stopIfEnding();
    if (!this.#afterReplies) return this.#chat.inner.stream(this.#sampled(request), options);
    this.#afterReplies = false;
    return new PartStream(this.#retriedRenderedBatches(request, options));
  }

  /** The request with the latest follow-up's settings, when one brought them. */
  #sampled(request: ChatModelRequest): ChatModelRequest {
    return this.#sampling === null ? request : requestWithSampling(request, this.#sampling);
  }

  async *#retriedRenderedBatches(
    request: ChatModelRequest,
    options: StreamOptions,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    // The adapter numbers its attempts from 1 at each call: this call's go on from the last.
    let attempts = 0;
    for (;;) {
      const segment = this.#segment;
      let answered = false;
      let tried = 1;
      try {
        // Each attempt with the settings of the request it answers (a retry may bring others).
        const attempt = this.#chat.inner.stream(this.#sampled(request), options);
        for await (const batch of batchesOf(attempt)) {
          answered ||= batch.some((part) => part.type !== "retry");
          yield batch.map((part) => {
            if (part.type !== "retry") return part;
            tried = part.attempt + 1;
            return { ...part, attempt: attempts + part.attempt };
          });
        }
        return;
      } catch (error) {
        if (answered || options.signal?.aborted || !clientRetries(error)) throw error;
        attempts += tried;
        this.#refused(segment, error);
        yield [retryPart(attempts, error)];
        await this.#nextBody(options, error);
        this.#bodies.shift();
      }
    }
  }

  /**
   * A later round's call, attempt after attempt: when the upstream refuses one before answering in
   * a way a client retries (429, 5xx, 408, 409, no connection), the client hears of it as from the
   * upstream, and its retry of the same follow-up is the call's next attempt (a `retry` part for
   * the record). Without this, the retry found no turn waiting and the agent's run ended there,
   * where talking to the upstream directly it would have gone on. A client that does not come back
   * within the retry wait leaves the call failed with the upstream's error.
   */
  async *#retriedBatches(
    request: ChatModelRequest,
    options: StreamOptions,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    let failed: unknown = null;
    for (let attempt = 1; ; attempt++) {
      await this.#nextBody(options, failed);
      const body = this.#bodies.shift() as Record<string, unknown>;
      const segment = this.#segment;
      const capture = options.capture;
      const parts = this.#chat.inner.stream(request, {
        ...options,
        raw_body: body,
        capture: {
          request: (text) => capture?.request(text),
          // The openai adapter hands raw bytes (the sim, which is never passed through, strings).
          response: (bytes) => {
            if (typeof bytes !== "string" && segment.forwardsBytes) segment.bytes(bytes);
            capture?.response(bytes);
          },
        },
      });
      let answered = false;
      try {
        for await (const batch of this.#forwardedBatches(parts, segment)) {
          answered ||= batch.some((part) => part.type !== "retry");
          yield batch;
        }
        return;
      } catch (error) {
        if (answered || options.signal?.aborted || !clientRetries(error)) throw error;
        failed = error;
        this.#refused(segment, error);
        yield [retryPart(attempt, error)];
      }
    }
  }

  /**
   * Waits for the client's next request (its body is the next call's). After a failed attempt
   * (`failed`), for its retry: past the retry wait, that failure is the call's.
   */
  async #nextBody(options: StreamOptions, failed: unknown): Promise<void> {
    while (this.#bodies.length === 0) {
      if (failed === null) this.#awaitClient();
      else this.#clearWait();
      await new Promise<void>((resolve, reject) => {
        const timer =
          failed === null
            ? null
            : setTimeout(() => reject(failed), Math.min(this.#clientWaitMs, RETRY_WAIT_MS));
        timer?.unref?.();
        this.#bodyArrived = () => {
          if (timer !== null) clearTimeout(timer);
          resolve();
        };
        options.signal?.addEventListener(
          "abort",
          () => {
            if (timer !== null) clearTimeout(timer);
            reject(options.signal?.reason);
          },
          { once: true },
        );
      });
    }
    // The client is back: the timer must not run while the model answers.
    this.#clearWait();
  }

  async *#forwardedBatches(
    parts: AsyncIterable<ChatModelPart>,
    segment: GatewaySegment,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    // The runtime stops reading at the finish part (the generator is returned, not run out), so
    // the segment ends in `finally` once the finish came; a call cut short ends with the turn.
    let finished = false;
    try {
      for await (const batch of batchesOf(parts)) {
        for (const part of batch) {
          if (part.type === "tool-call") this.#handedOut.set(part.id, part.raw_arguments);
          if (part.type === "finish") finished = true;
        }
        yield batch;
      }
    } finally {
      if (finished) this.#endForwarding(segment);
    }
  }

  /** A forwarding segment's upstream call ended well: the client has the whole answer. */
  #endForwarding(segment: GatewaySegment): void {
    if (!segment.forwardsBytes) return;
    segment.endBytes();
    // The calls (if any) are with the client now; a turn that ends clears the wait.
    this.#awaitClient();
  }
}

interface RoundWatch {
  /** The calls as the model wrote them, by id. */
  calls: Map<string, ClientCall>;
  settled: Set<string>;
  at_client: Map<string, ClientCall>;
  model_done: boolean;
}

/** A rendered round's calls as the client got them: id → arguments. */
function atClient(round: RoundWatch): Map<string, string> {
  return new Map([...round.at_client].map(([id, call]) => [id, call.arguments]));
}

function newRoundWatch(): RoundWatch {
  return { calls: new Map(), settled: new Set(), at_client: new Map(), model_done: false };
}

/**
 * A turn that ended without an upstream failure to report: cancelled (the lab is stopping: 503),
 * failed because the database refused it (503 `storage_failed`, as the API answers: the database's
 * trouble, named, not a bug to log), or failed in the lab (500, and logged).
 */
export class GatewayTurnEnded extends AgentLabError {
  readonly code: "turn_cancelled" | "turn_failed" | "storage_failed";
  constructor(status: "cancelled" | "failed", reason: string, storage = false) {
    super(`the turn ended ${status}: ${reason}`);
    this.code =
      status === "cancelled" ? "turn_cancelled" : storage ? "storage_failed" : "turn_failed";
  }
}

/**
 * The call ids the replies answer, in order: an id the upstream repeated was renamed for its
 * second call on (`call_0`, then `call_0_2`), so its second reply answers that one.
 */
function replyIds(replies: readonly { tool_call_id: string }[]): string[] {
  const seen = new Map<string, number>();
  return replies.map((reply) => {
    const count = (seen.get(reply.tool_call_id) ?? 0) + 1;
    seen.set(reply.tool_call_id, count);
    return count === 1 ? reply.tool_call_id : `${reply.tool_call_id}_${count}`;
  });
}

/**
 * A completed turn's answer ends as its last model call did, when that says something a client
 * acts on: cut at its token limit (`length`), or filtered (`content_filter`). Else `stop`.
 */
function answerFinish(reason: string | null): SegmentFinish {
  return reason === "length" || reason === "content_filter" ? reason : "stop";
}

/** How long a round whose call failed waits for the client's retry (openai-node's is seconds). */
const RETRY_WAIT_MS = 2 * 60_000;

/** The record of an attempt the upstream refused, whose next attempt is the client's retry. */
function retryPart(
  attempt: number,
  error: ProviderApiError | ProviderConnectionError,
): ChatModelPart {
  return {
    type: "retry",
    attempt,
    status: error instanceof ProviderApiError ? error.status : null,
    reason: `${redactSecretText(error.message)}; the client's retry of the request makes the next attempt`,
    delay_ms: 0,
  };
}

/** Statuses openai-node and the AI SDK retry (and a connection that failed). */
function clientRetries(error: unknown): error is ProviderApiError | ProviderConnectionError {
  if (error instanceof ProviderConnectionError) return true;
  if (!(error instanceof ProviderApiError)) return false;
  // The upstream said not to (forwarded as x-should-retry): openai-node will not.
  if (error.shouldRetry === false) return false;
  return (
    error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500
  );
}
