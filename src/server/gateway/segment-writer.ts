import type { TurnEvent } from "../../domain/turn-events.js";
import type { ClientCall, ClientToolBridge } from "./client-tools.js";
import type { ClientWait } from "./client-wait.js";
import type { WatchedModel } from "./gateway-models.js";
import type { GatewaySegment } from "./gateway-segment.js";
import { atClient, newRoundWatch, type RoundWatch } from "./round-watch.js";
import { endSegment } from "./turn-end.js";

/** What a turn's segment writer needs of the turn. */
export interface SegmentWriterSetup {
  /** The segment the turn writes into now: each client request opens the next. */
  segment(): GatewaySegment;
  pass_through: boolean;
  /** False when the request said `parallel_tool_calls: false` (see onClientCall). */
  parallel_tool_calls: boolean;
  /** The client's tools: a call the lab refuses, or whose reply came first, is answered there. */
  bridge: ClientToolBridge;
  wait: ClientWait;
  /** The turn's models: a failed turn reports the last failure of their calls. */
  chat: WatchedModel;
  event: WatchedModel;
}

/**
 * A gateway turn's events, written into the segment the client reads: in a rendered segment the
 * answer's text, reasoning and usage; in any, the round's calls once they are out (the segment
 * ends there and the client runs them), and the turn's end.
 */
export class SegmentWriter {
  readonly #segment: () => GatewaySegment;
  readonly #passThrough: boolean;
  readonly #bridge: ClientToolBridge;
  readonly #wait: ClientWait;
  readonly #chat: WatchedModel;
  readonly #event: WatchedModel;
  /** Rendered segments: the current round's calls and where each stands. */
  #round = newRoundWatch();
  /**
   * Rendered segments: where text was last written. A round that follows one whose calls the lab
   * answered itself (dual_agent arguments beyond repair) writes into the same answer, and its text
   * must not run on from the last round's ("One moment.Hello").
   */
  #lastText: { segment: GatewaySegment; round: RoundWatch; sent: string } | null = null;
  /** The turn's `error` event, for a failure no upstream explains. */
  #failure: { code: string; message: string } | null = null;
  /** How the chat agent's last round ended, as its endpoint said. */
  #lastFinish: string | null = null;
  #turnIndex: number | null = null;
  #answer: string | null = null;
  /** Whether the client takes several calls an answer; the latest follow-up's says. */
  parallelCalls: boolean;

  constructor(setup: SegmentWriterSetup) {
    this.#segment = setup.segment;
    this.#passThrough = setup.pass_through;
    this.parallelCalls = setup.parallel_tool_calls;
    this.#bridge = setup.bridge;
    this.#wait = setup.wait;
    this.#chat = setup.chat;
    this.#event = setup.event;
  }

  /** The turn's index, once it has started. */
  get turnIndex(): number | null {
    return this.#turnIndex;
  }

  /** The turn's answer once it completed, for grouping the conversation's next request. */
  get answer(): string | null {
    return this.#answer;
  }

  /** A rendered round's calls as the client got them: id → arguments. */
  atClient(): Map<string, string> {
    return atClient(this.#round);
  }

  /** A follow-up came: its segment starts on a new round. */
  newRound(): void {
    this.#round = newRoundWatch();
  }

  /** Each of the runtime's events, as the turn reads them. */
  onEvent(event: TurnEvent): void {
    const segment = this.#segment();
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
        this.#wait.clearWait();
        this.#round = newRoundWatch();
        return;
      case "tool_call": {
        const { id, name, raw_arguments } = event.event;
        this.#round.calls.set(id, { id, name, arguments: raw_arguments });
        if (this.#passThrough) this.#wait.handOut(id, event.event.raw_arguments);
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
    const segment = this.#segment();
    if (event.status === "completed") {
      // What the client read is what its next request carries as the last answer (several
      // rounds' texts, in a rendered answer that went on past calls the lab answered itself).
      const last = this.#lastText;
      this.#answer = last !== null && last.segment === segment ? last.sent : event.answer;
    }
    endSegment(segment, event, {
      lastFinish: this.#lastFinish,
      upstreamError: this.#chat.lastError ?? this.#event.lastError,
      failure: this.#failure,
    });
  }

  /** A call waits at the bridge for the client (the bridge's `onCall`). */
  onClientCall(call: ClientCall): void {
    const early = this.#wait.takeReply(call.id);
    if (early !== undefined) {
      this.#bridge.answer(call.id, early);
      return;
    }
    // A client that takes one call at a time gets the round's first; the model reads why the
    // others were not run and may make them again once it has that one's result.
    const [first] = this.#round.at_client.values();
    if (!this.#passThrough && !this.parallelCalls && first !== undefined) {
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
    const segment = this.#segment();
    if (segment.forwardsBytes) return;
    const round = this.#round;
    setImmediate(() => {
      if (segment !== this.#segment() || segment.ended || !round.model_done) return;
      if (this.#passThrough) {
        // Every call the model wrote goes to the client, even those the lab answered itself
        // (its next request carries the body of the next call): the round may be over already.
        if (round.calls.size === 0) return;
        segment.finish("tool_calls", [...round.calls.values()]);
        this.#wait.awaitClient();
        return;
      }
      if (round !== this.#round || round.at_client.size === 0) return;
      for (const id of round.calls.keys()) {
        if (!round.at_client.has(id) && !round.settled.has(id)) return;
      }
      segment.finish("tool_calls", [...round.at_client.values()]);
      this.#wait.awaitClient();
    });
  }
}
