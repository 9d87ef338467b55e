import { createHash, randomUUID } from "node:crypto";
import {
  AgentLabError,
  InvalidInputError,
  SessionModelMismatchError,
  SessionModeMismatchError,
  TurnInProgressError,
} from "../../domain/errors.js";
import {
  type ChatCompletionRequest,
  GATEWAY_TAG,
  type GatewaySessionMark,
  type RequestMessage,
} from "../../domain/gateway.js";
import { sliceWhole } from "../../domain/json-limits.js";
import { storedSessionConfig } from "../../runtime/open-session.js";
import type { ModelProvider } from "../../runtime/turn-providers.js";
import type { SessionStore } from "../../store/session-store.js";
import type { GatewayModels } from "./gateway-model-cache.js";
import type { GatewaySegment } from "./gateway-segment.js";
import { GatewayTurn } from "./gateway-turn.js";
import {
  classifyRequest,
  firstMediaMessage,
  lastUserMessageOf,
  previousAnswerOf,
  saidOf,
  systemPromptOf,
} from "./request-messages.js";
import {
  followUpSettings,
  parallelCalls,
  renderedTools,
  requestSampling,
} from "./request-settings.js";
import { RetryLedger } from "./retry-ledger.js";
import type { GatewayModelResolution } from "./upstream-resolution.js";

/** What a request's `model` (and the mode header) resolved to, and how to build its models. */
export type ResolvedGatewayModel = GatewayModelResolution & {
  /** Builds the two models (a per-request key, for pass_client_key, lives only in these). */
  build(): GatewayModels;
};

export interface GatewayRequestContext {
  body: ChatCompletionRequest;
  /** The body as the client sent it, for pass-through. */
  raw_body: Record<string, unknown>;
  segment: GatewaySegment;
  /** `X-Agent-Lab-Session`, when given. */
  session_header: string | null;
  /** A retry whose first attempt failed: the session that attempt ran in. */
  retried_session?: string;
  /**
   * The session of a request with the same body from the same client that failed unanswered a
   * moment ago (a retry the client did not say is one): taken when it is free, else ignored.
   */
  inferred_retry_of?: string;
  resolved: () => ResolvedGatewayModel;
}

export interface GatewaySessionsOptions {
  store: SessionStore;
  models: ModelProvider;
  /** How long a turn waits for a client's tool replies (default 10 minutes). */
  client_wait_ms?: number;
  /** How long after its last answer a conversation may continue its session (default 30 minutes). */
  conversation_gap_ms?: number;
  /** True while a turn of the lab's own API runs in the session (ActiveTurns). */
  busy?: (session_id: string) => boolean;
  /** Told of a conversation marker the store could not write or read (the server's log). */
  report?: (error: unknown) => void;
}

const MAX_RECENT = 1_000;

/**
 * The audit event that keeps a turn's conversation marker (see #remember), so a restarted server
 * still continues the conversations of the gap before it.
 */
export const CONVERSATION_EVENT = "gateway_conversation";

/** A resumed turn's message when the request holds no user message (see `handle`). */
const RESUMED_TURN = "(a conversation resumed at its tool replies)";

/**
 * The most sessions a restarted server reads markers from, newest first: each costs a read of its
 * audit log, once per process.
 */
const MAX_RECALLED = 200;

/**
 * Which session and turn a gateway request belongs to. Tool replies go to the turn that waits for
 * those calls. A user message starts a turn: in the session `X-Agent-Lab-Session` names (created
 * on first use), else in the session whose last turn the request repeats, its messages and its
 * answer (the same conversation, resent), within the gap; else in a new session.
 */
export class GatewaySessions {
  readonly #store: SessionStore;
  readonly #models: ModelProvider;
  readonly #clientWaitMs: number;
  readonly #gapMs: number;
  readonly #busy: (session_id: string) => boolean;
  readonly #report: (error: unknown) => void;
  readonly #turns = new Map<string, GatewayTurn>();
  /** Answers kept for clients that retry a request whose answer they lost. */
  readonly retries = new RetryLedger();
  /** The conversations a request may continue (see #continued), by session id. */
  readonly #recent = new Map<string, RecentConversation>();
  /** The markers of the gap before this process started, read once, when first needed. */
  #recalled: Promise<void> | null = null;

  constructor(options: GatewaySessionsOptions) {
    this.#store = options.store;
    this.#models = options.models;
    this.#clientWaitMs = options.client_wait_ms ?? 10 * 60_000;
    this.#gapMs = options.conversation_gap_ms ?? 30 * 60_000;
    this.#busy = options.busy ?? (() => false);
    this.#report = options.report ?? (() => {});
  }

  /**
   * Starts or continues the turn the request belongs to; the answer (or the refusal) goes to the
   * request's segment. Throws only for a request that cannot be placed (bad input, a follow-up no
   * turn waits for); the caller answers those itself. Returns the session's id.
   */
  async handle(request: GatewayRequestContext): Promise<string> {
    const { body } = request;
    const kind = classifyRequest(body.messages);
    /** Tool replies no turn waits for (see below). */
    let orphaned: string[] | null = null;
    if (kind.kind === "tool_replies") {
      const ids = kind.replies.map((reply) => reply.tool_call_id);
      const turn = this.#waitingTurn(request.session_header, ids, body.messages);
      refuseUnanswered(turn?.unanswered(kind.replies) ?? []);
      // Refused (400 naming the field) before the turn takes the replies: a refusal changes nothing.
      const settings =
        turn === null || turn.passesThrough ? null : followUpSettings(request.raw_body);
      if (turn?.continueWith(segmentOf(request), kind.replies, settings)) return turn.session_id;
      orphaned = ids;
    }
    const message =
      kind.kind === "user" ? kind.message : (lastUserMessageOf(body.messages) ?? RESUMED_TURN);
    const replies = kind.kind === "user" ? kind.replies : [];
    const resolved = request.resolved();
    const { chat, event, tappedFetch } = resolved.build();
    const pass_through = resolved.mode === "chat_agent_tools" && chat.provider === "openai";
    // Tool replies no turn waits for: the lab restarted, or the turn ended (its wait ran out, its
    // answer was given). In pass-through the request is whole, so it goes upstream as it is, as a
    // new turn (its last user message the turn's): an agent between its tools and its next call
    // when the lab restarted goes on. A rendered mode's request is written from the session's
    // history, which lacks these replies: refused as before.
    if (orphaned !== null && !pass_through) throw noWaitingTurn(orphaned);
    const sampling = requestSampling(request.raw_body, pass_through);
    const parallel_tool_calls = parallelCalls(request.raw_body, pass_through);
    const tools = pass_through
      ? (body.tools ?? [])
      : renderedTools(request.raw_body, body.tools ?? []);
    // The lab writes the request itself from the session's text history: a real model would
    // answer as if it had seen what it was never sent (the sim is a stand-in, and sees no image).
    const media = pass_through || chat.simulated ? null : firstMediaMessage(body.messages);
    if (media !== null) {
      throw new InvalidInputError(
        `messages.${media}.content: ${resolved.mode} sends the model the conversation's text only, and this message carries an image, audio or a file; send it in pass-through (chat_agent_tools on an OpenAI-compatible upstream), or as text`,
      );
    }
    const named = request.session_header ?? request.retried_session ?? null;
    const abandoned = named === null ? this.#abandonedTurn(body.messages) : null;
    if (named === null && abandoned === null && previousAnswerOf(body.messages) !== null) {
      await this.#recall();
    }
    const placed =
      named ??
      abandoned?.session_id ??
      this.#inferredRetry(request.inferred_retry_of) ??
      this.#continued(body.messages) ??
      null;
    let session_id = placed ?? randomUUID();
    // A turn of the lab's API holds the session: refused before the upstream call starts.
    if (this.#busy(session_id)) throw new TurnInProgressError(session_id, null, null);
    const running = this.#turns.get(session_id);
    // Replies to calls of no turn, in a session whose turn waits for others (a stale step sent
    // again): that turn is live, and these are not its replies.
    if (orphaned !== null && running !== undefined) throw noWaitingTurn(orphaned);
    // Still answering another request of this session: that one goes on, this one waits.
    if (running !== undefined && !running.awaitingClient) {
      throw new TurnInProgressError(session_id, null, null);
    }
    // Refused now, before the upstream call starts (pass-through starts it at once), and before
    // a turn waiting for tool replies is ended for it: a refusal changes nothing.
    // (A conversation no session holds gets a fresh id, which names none: nothing to read.)
    const existing = placed === null ? null : await storedSessionConfig(this.#store, session_id);
    // A session keeps its mode and its models: a call to another model would be recorded and
    // priced as the session's. A named session refuses either; a conversation that goes on in
    // another mode or with another model (a client may route its steps to several) goes on in a
    // session of its own.
    const otherMode = existing !== null && existing.mode !== resolved.mode;
    if (otherMode && named !== null) {
      throw new SessionModeMismatchError(existing.mode, resolved.mode);
    }
    const held = existing === null ? null : agentOf(existing.config.chat_agent);
    const asked = agentOf(resolved.chat_agent);
    if (held !== null && held !== asked && named !== null) {
      throw new SessionModelMismatchError(session_id, held, asked);
    }
    // The client moved on: the turn waiting for its replies ends now, with the replies it sent
    // before its new message as its calls' results (none: the calls answered "interrupted").
    const replyIds = replies.map((reply) => reply.tool_call_id);
    if (running !== undefined && replies.length > 0 && running.waitsFor(replyIds)) {
      refuseUnanswered(running.unanswered(replies));
      await running.endWith(
        replies,
        "the client sent the tool replies with a new user message, which starts the next turn",
      );
    } else if (running !== undefined) {
      await running.cancel("the client started a new turn without replying to the tool calls");
    }
    if (otherMode || (held !== null && held !== asked)) session_id = randomUUID();
    const mark: GatewaySessionMark = {
      requested_model: body.model,
      upstream: resolved.upstream,
      grouped_by: request.session_header === null ? "conversation" : "header",
    };
    const system_prompt = systemPromptOf(body.messages);
    const turn = new GatewayTurn(
      {
        store: this.#store,
        session_id,
        title: sliceWhole(message, 80),
        config: {
          tool_invocation_mode: resolved.mode,
          chat_agent: {
            ...resolved.chat_agent,
            ...(system_prompt === undefined ? {} : { system_prompt }),
            ...sampling,
          },
          event_agent: { ...resolved.event_agent },
          tools: [],
          // The client decides how long its loop runs; the lab's limit only stops a runaway.
          max_rounds: 50,
          capture: { payloads: resolved.capture },
          gateway: mark,
          tags: [GATEWAY_TAG],
        },
        chat_sampling: sampling,
        parallel_tool_calls,
        message,
        chat_model: chat,
        ...(tappedFetch === undefined ? {} : { tapped_fetch: tappedFetch }),
        event_model: event,
        models: this.#models,
        tools,
        opening: body.messages,
        pass_through,
        client_wait_ms: this.#clientWaitMs,
        onEnd: () => {
          if (this.#turns.get(session_id) === turn) this.#turns.delete(session_id);
          if (turn.answer !== null) void this.#remember(session_id, turn.answer, body.messages);
        },
      },
      segmentOf(request),
    );
    this.#turns.set(session_id, turn);
    return session_id;
  }

  /** Stops every turn (the server is closing): their calls are answered "interrupted". */
  async close(): Promise<void> {
    await Promise.all([...this.#turns.values()].map((turn) => turn.cancel("the lab is stopping")));
  }

  /**
   * The turn these replies continue: the named session's, else the one turn waiting for those
   * calls. Turns of several conversations may wait for calls of the same ids (dual_agent numbers
   * its calls per turn, some upstreams per answer): then the one whose first request's messages
   * the request begins with.
   */
  #waitingTurn(
    sessionHeader: string | null,
    ids: readonly string[],
    messages: readonly RequestMessage[],
  ): GatewayTurn | null {
    if (sessionHeader !== null) {
      const turn = this.#turns.get(sessionHeader);
      return turn?.waitsFor(ids) ? turn : null;
    }
    // Only a turn of this very conversation: call ids collide across conversations (`call_0`,
    // `evt_1_1_1`), and replies given to another's turn would write one client's data into another
    // client's session. The turn's first request's messages begin this one (as they say it, see
    // saidOf), else, for a client that trimmed its history, the calls the request's last assistant
    // message repeats are the turn's own, arguments and all, and so is its last user message.
    const asked = lastAssistantCalls(messages);
    const said = lastUserMessageOf(messages);
    const waiting = [...this.#turns.values()].filter((turn) => turn.waitsFor(ids));
    const openings = waiting.map((turn) => turn.opensWith(messages));
    const mine = waiting.filter(
      (turn, index) =>
        (openings[index] as number) >= 0 || (turn.handedOut(asked) && turn.startedBy(said)),
    );
    if (mine.length <= 1) return mine[0] ?? null;
    // The longest opening (a later turn of the same conversation repeats more of it); among
    // equals (twin conversations), the one whose calls the request repeats; else the oldest.
    const longest = Math.max(...mine.map((turn) => openings[waiting.indexOf(turn)] as number));
    const tied = mine.filter((turn) => openings[waiting.indexOf(turn)] === longest);
    return tied.find((turn) => turn.handedOut(asked)) ?? (tied[0] as GatewayTurn);
  }

  /**
   * The failed attempt's session an unsaid retry goes on in: an inference, so only when that
   * session is free (never a refusal because of a guess); asked only when no session is named.
   */
  #inferredRetry(sessionId: string | undefined): string | undefined {
    return sessionId !== undefined && !this.#busy(sessionId) && !this.#turns.has(sessionId)
      ? sessionId
      : undefined;
  }

  /**
   * A user message after calls the client never answered (the user cut the agent short): the turn
   * that waits for those calls is this conversation's, and ends for the new one (see handle), as in
   * a named session, instead of waiting out the client's time while the conversation goes on in a
   * session of its own.
   */
  #abandonedTurn(messages: readonly RequestMessage[]): GatewayTurn | null {
    const asked = lastAssistantCalls(messages);
    if (asked.length === 0) return null;
    const ids = asked.map((call) => call.id);
    // Only a turn of this very conversation (its first request's messages begin this one): call
    // ids collide across conversations (`evt_1_1_1`, `call_0`), and a wrong guess would end
    // another client's turn and write this conversation into its session.
    const mine = [...this.#turns.values()].filter(
      (turn) => turn.awaitingClient && turn.waitsFor(ids) && turn.opensWith(messages) >= 0,
    );
    if (mine.length <= 1) return mine[0] ?? null;
    // Twins (the same first messages): the one whose calls these are, else none is ended.
    const same = mine.filter((turn) => turn.handedOut(asked));
    return same.length === 1 ? (same[0] as GatewayTurn) : null;
  }

  /**
   * The session whose last turn this request goes on from, within the gap: the request's last
   * assistant message is that turn's answer, and its messages begin with the ones that turn's
   * request carried. The answer alone is not enough: two conversations that opened with "hi" got
   * the same greeting, and one's next message went on in the other's session (the model, in
   * dual_agent, then answering from the other's history).
   */
  #continued(messages: readonly RequestMessage[]): string | null {
    const previousAnswer = previousAnswerOf(messages);
    if (previousAnswer === null) return null;
    const now = Date.now();
    const wanted = answerHash(previousAnswer);
    const openings = new Map<number, string>();
    const openingOf = (length: number) => {
      let hash = openings.get(length);
      if (hash === undefined) {
        hash = messagesHash(messages.slice(0, length));
        openings.set(length, hash);
      }
      return hash;
    };
    let found: string | null = null;
    let latest = -1;
    for (const [session_id, recent] of this.#recent) {
      if (now - recent.at > this.#gapMs || recent.answer !== wanted) continue;
      if (messages.length <= recent.opened_with) continue;
      if (openingOf(recent.opened_with) !== recent.opening) continue;
      if (recent.at > latest) {
        found = session_id;
        latest = recent.at;
      }
    }
    return found;
  }

  /**
   * Keeps the turn's marker in memory and in the session's audit log (hashes only): a server
   * restarted within the gap reads it back (#recall), so the conversation goes on in its session
   * instead of starting a new one, which in dual_agent would also lose the model its history.
   */
  async #remember(
    session_id: string,
    answer: string,
    opening: readonly RequestMessage[],
  ): Promise<void> {
    const marker: ConversationMarker = {
      answer: answerHash(answer),
      opened_with: opening.length,
      opening: messagesHash(opening),
    };
    this.#keep(session_id, { ...marker, at: Date.now() });
    try {
      await this.#store.appendAudit(session_id, {
        event: CONVERSATION_EVENT,
        // Named: a copy imported under another id carries the row, and must not take the
        // conversation from the session that answered it.
        details: { session_id, ...marker },
      });
    } catch (error) {
      // Only a restart's continuation depends on it: the turn and its records stand.
      this.#report(error);
    }
  }

  #keep(session_id: string, recent: RecentConversation): void {
    this.#recent.delete(session_id);
    this.#recent.set(session_id, recent);
    if (this.#recent.size > MAX_RECENT) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
  }

  /**
   * Reads, once per process, the markers of the gateway sessions updated within the gap (the
   * newest MAX_RECALLED), each session's latest; a session this process has answered since keeps
   * its own. A store that cannot be read leaves the memory as it is, and is asked again next time.
   */
  #recall(): Promise<void> {
    this.#recalled ??= this.#readMarkers().catch((error: unknown) => {
      this.#recalled = null;
      this.#report(error);
    });
    return this.#recalled;
  }

  async #readMarkers(): Promise<void> {
    const page = await this.#store.listSessionPage({
      tag: GATEWAY_TAG,
      experiments: "include",
      updated_from: new Date(Date.now() - this.#gapMs).toISOString(),
      limit: MAX_RECALLED,
    });
    const found: [string, RecentConversation][] = [];
    for (const session of page.sessions) {
      if (this.#recent.has(session.id)) continue;
      const audit = await this.#store.listAuditLogs(session.id);
      const row = audit.findLast((entry) => entry.event === CONVERSATION_EVENT);
      const marker = row === undefined ? null : markerOf(row.details, session.id);
      if (row === undefined || marker === null) continue;
      found.push([session.id, { ...marker, at: Date.parse(row.created_at) }]);
    }
    // Oldest first, as they were remembered; none replaces one this process kept meanwhile.
    found.sort((a, b) => a[1].at - b[1].at);
    for (const [session_id, recent] of found) {
      if (!this.#recent.has(session_id)) this.#keep(session_id, recent);
    }
  }
}

interface ConversationMarker {
  /** The turn's answer, hashed. */
  answer: string;
  /** How many messages the turn's (first) request carried, and their hash. */
  opened_with: number;
  opening: string;
}

/**
 * A stored marker read back, or null when the row is not one (edited) or is another session's (a
 * copy imported under another id).
 */
function markerOf(details: Record<string, unknown>, sessionId: string): ConversationMarker | null {
  const { answer, opened_with, opening, session_id } = details;
  if (session_id !== sessionId) return null;
  if (typeof answer !== "string" || typeof opening !== "string") return null;
  if (typeof opened_with !== "number" || !Number.isInteger(opened_with) || opened_with < 0) {
    return null;
  }
  return { answer, opened_with, opening };
}

/** A session's last turn, as a later request of the same conversation repeats it. */
interface RecentConversation extends ConversationMarker {
  /** When it was answered (ms since the epoch). */
  at: number;
}

/** What a conversation's messages say (`saidOf`), hashed. */
function messagesHash(messages: readonly RequestMessage[]): string {
  return createHash("sha256").update(messages.map(saidOf).join("\n")).digest("base64");
}

/** Answers are kept as hashes: a thousand long answers need not stay in memory to be matched. */
function answerHash(answer: string): string {
  return createHash("sha256").update(answer.trim()).digest("base64");
}

/** A follow-up that no turn waits for (409, like any other lab error, through its code). */
export class NoWaitingTurnError extends AgentLabError {
  readonly code = "no_waiting_turn" as const;
}

function segmentOf(request: GatewayRequestContext) {
  return { segment: request.segment, body: request.raw_body };
}

/** An agent's model as a session holds it: the model string, and the endpoint when it names one. */
function agentOf(agent: { model: string; base_url?: string | undefined }): string {
  return agent.base_url === undefined ? agent.model : `${agent.model} at ${agent.base_url}`;
}

/** The tool calls of the request's last assistant message, as the client sends them back. */
function noWaitingTurn(ids: readonly string[]): NoWaitingTurnError {
  return new NoWaitingTurnError(
    `no turn waits for the replies to ${ids.join(", ")}: it ended (its answer was given, or its calls were answered "interrupted" after the wait) or the lab restarted; send the conversation's last user message again to start a new turn`,
  );
}

/** A follow-up that leaves calls unanswered is refused, as OpenAI refuses it (400 naming them). */
function refuseUnanswered(unanswered: readonly string[]): void {
  if (unanswered.length === 0) return;
  throw new InvalidInputError(
    `messages: an assistant message with tool_calls must be followed by a tool message for each of its calls; none answers ${unanswered.join(", ")}`,
  );
}

function lastAssistantCalls(
  messages: readonly RequestMessage[],
): { id: string; arguments: string }[] {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== "assistant") continue;
    return (message.tool_calls ?? []).map((call) => ({
      id: call.id,
      arguments: call.function.arguments,
    }));
  }
  return [];
}
