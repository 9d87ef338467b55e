import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../../providers/chat-model.js";
import { batchesOf, PartStream } from "../../providers/part-stream.js";
import { requestWithSampling, type SamplingSettings } from "../../runtime/modes/agent-sampling.js";
import { clientRetries, RETRY_WAIT_MS, retryPart } from "./client-retry.js";
import type { ClientWait } from "./client-wait.js";
import { EarlyCall } from "./gateway-models.js";
import type { GatewaySegment } from "./gateway-segment.js";
import type { TappedFetch } from "./upstream-fetch.js";

/** What a turn's upstream calls need of the turn. */
export interface UpstreamCallsSetup {
  /** The chat model the calls go to (the turn's, unwrapped). */
  model: ChatModel;
  /**
   * The turn's: the early call starts before the runtime runs, so it listens to the turn's own
   * signal (a cancelled turn stops it); the later calls get the runtime's.
   */
  signal: AbortSignal;
  wait: ClientWait;
  /** The segment the turn writes into now: each client request opens the next. */
  segment(): GatewaySegment;
  /** Before each call: throws when the turn is to end there instead (see GatewayTurn.endWith). */
  beforeCall(): void;
}

/**
 * The chat agent's model calls of a gateway turn, as the runtime asks for them. Pass-through: the
 * first is the early call, each later one sends a follow-up's body and forwards the upstream's
 * bytes. Rendered: the lab writes the request, with the latest follow-up's settings.
 */
export class UpstreamCalls {
  readonly #model: ChatModel;
  readonly #signal: AbortSignal;
  readonly #wait: ClientWait;
  readonly #segment: () => GatewaySegment;
  readonly #beforeCall: () => void;
  /** Pass-through: the requests whose body the next model call sends, oldest first. */
  readonly #bodies: Record<string, unknown>[] = [];
  #bodyArrived: (() => void) | null = null;
  /** Pass-through: the turn's first call, started before the runtime asks for it. */
  #early: EarlyCall | null = null;
  /** Rendered: the next chat call answers a follow-up (see renderedCall). */
  #afterReplies = false;
  /** The latest follow-up's sampling; null: the turn's own (its first request's). */
  sampling: SamplingSettings | null = null;

  constructor(setup: UpstreamCallsSetup) {
    this.#model = setup.model;
    this.#signal = setup.signal;
    this.#wait = setup.wait;
    this.#segment = setup.segment;
    this.#beforeCall = setup.beforeCall;
  }

  /** A call waits for the client's next request (a follow-up, or its retry). */
  get waitsForBody(): boolean {
    return this.#bodyArrived !== null;
  }

  /**
   * A client request a model call waits for: in pass-through its body is the call's request; in a
   * rendered turn it is only the retry a refused call waits for (the lab writes the request).
   */
  pushBody(body: Record<string, unknown>): void {
    this.#bodies.push(body);
    const arrived = this.#bodyArrived;
    this.#bodyArrived = null;
    arrived?.();
  }

  /** Rendered: the next chat call answers a follow-up's replies (see renderedCall). */
  expectReplies(): void {
    this.#afterReplies = true;
  }

  /** A turn refused or ended before it asked for its first call does not leave it running. */
  abortEarly(reason: Error): void {
    this.#early?.abort(reason);
  }

  /**
   * The first upstream call starts with the request (see EarlyCall): the runtime attaches to it
   * when its first round calls the model.
   */
  startEarly(
    message: string,
    body: Record<string, unknown>,
    tappedFetch: TappedFetch | undefined,
  ): EarlyCall {
    // The call answers this request: its bytes go to this segment, whatever comes next.
    const segment = this.#segment();
    const forward = (piece: Uint8Array) => {
      if (segment.forwardsBytes) segment.bytes(piece);
    };
    // Tapped, the bytes go to the client as they arrive, not once the adapter has read them.
    const fetch = tappedFetch?.({ bytes: forward });
    this.#early = new EarlyCall(
      this.#model,
      { messages: [{ role: "user", content: message, tool_calls: [] }] },
      {
        raw_body: body,
        signal: this.#signal,
        bytes: fetch === undefined ? forward : () => {},
        ...(fetch === undefined ? {} : { fetch }),
        toolCall: (id, rawArguments) => this.#wait.handOut(id, rawArguments),
        ended: () => this.#endForwarding(segment),
      },
    );
    return this.#early;
  }

  /**
   * Each upstream call answers one client request and sends that request's body: the first is the
   * early call, a later round the follow-up's (which it waits for, as the client decides when to
   * come back). Every read of the response goes to the current segment too.
   */
  async passThroughCall(
    request: ChatModelRequest,
    options: StreamOptions,
  ): Promise<AsyncIterable<ChatModelPart>> {
    this.#beforeCall();
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
    this.#wait.refused();
  }

  /**
   * Rendered (dual_agent, sim): the call that answers a follow-up is retried the client's way when
   * the upstream refuses it (after the adapter's own retries), as in pass-through: the follow-up
   * fails with the upstream's error and the client's retry of it makes the next attempt. Other
   * calls (the turn's first, the rounds the lab goes on with itself) go as they are.
   */
  async renderedCall(
    request: ChatModelRequest,
    options: StreamOptions,
  ): Promise<AsyncIterable<ChatModelPart>> {
    this.#beforeCall();
    if (!this.#afterReplies) return this.#model.stream(this.#sampled(request), options);
    this.#afterReplies = false;
    return new PartStream(this.#retriedRenderedBatches(request, options));
  }

  /** The request with the latest follow-up's settings, when one brought them. */
  #sampled(request: ChatModelRequest): ChatModelRequest {
    return this.sampling === null ? request : requestWithSampling(request, this.sampling);
  }

  async *#retriedRenderedBatches(
    request: ChatModelRequest,
    options: StreamOptions,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    // The adapter numbers its attempts from 1 at each call: this call's go on from the last.
    let attempts = 0;
    for (;;) {
      const segment = this.#segment();
      let answered = false;
      let tried = 1;
      try {
        // Each attempt with the settings of the request it answers (a retry may bring others).
        const attempt = this.#model.stream(this.#sampled(request), options);
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
      const segment = this.#segment();
      const capture = options.capture;
      const parts = this.#model.stream(request, {
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
      if (failed === null) this.#wait.awaitClient();
      else this.#wait.clearWait();
      await new Promise<void>((resolve, reject) => {
        // The signal is the turn's, which outlives this wait (a follow-up round per wait): every
        // way out (the body, the retry wait's end, the abort) clears the timer, the listener and
        // the waiter alike, so no call looks as if it still waited for a body.
        const end = (failure: { error: unknown } | null) => {
          if (timer !== null) clearTimeout(timer);
          options.signal?.removeEventListener("abort", aborted);
          this.#bodyArrived = null;
          if (failure === null) resolve();
          else reject(failure.error);
        };
        const aborted = () => end({ error: options.signal?.reason });
        const timer =
          failed === null
            ? null
            : setTimeout(() => end({ error: failed }), Math.min(this.#wait.waitMs, RETRY_WAIT_MS));
        timer?.unref?.();
        this.#bodyArrived = () => end(null);
        options.signal?.addEventListener("abort", aborted, { once: true });
        // An abort that came before the listener would otherwise leave the wait to its timer.
        if (options.signal?.aborted) aborted();
      });
    }
    // The client is back: the timer must not run while the model answers.
    this.#wait.clearWait();
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
          if (part.type === "tool-call") this.#wait.handOut(part.id, part.raw_arguments);
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
    this.#wait.awaitClient();
  }
}
