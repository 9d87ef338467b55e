import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../../providers/chat-model.js";
import { batchesOf, PartStream } from "../../providers/part-stream.js";

/**
 * The models of a gateway turn, wrapped: the last failure of a call is kept so that the client
 * hears the upstream's own status (a 429 stays a 429) rather than the turn's generic failure.
 */
export class WatchedModel implements ChatModel {
  readonly provider: string;
  readonly model: string;
  readonly simulated: boolean;
  readonly baseUrl: string | undefined;
  lastError: unknown = null;

  constructor(
    readonly inner: ChatModel,
    /** Where each call's parts come from (pass-through: an early call, or the client's body). */
    readonly source: (
      request: ChatModelRequest,
      options: StreamOptions,
    ) => Promise<AsyncIterable<ChatModelPart>> = async (request, options) =>
      inner.stream(request, options),
    /** Told of the model serving each call as soon as its first token names it. */
    private readonly onServed: (model: string) => void = () => {},
  ) {
    this.provider = inner.provider;
    this.model = inner.model;
    this.simulated = inner.simulated;
    this.baseUrl = inner.baseUrl;
  }

  stream(request: ChatModelRequest, options: StreamOptions = {}): PartStream<ChatModelPart> {
    return new PartStream(this.#batches(request, options));
  }

  /** Batches, as the source gives them: the runtime reads them without a promise per part. */
  async *#batches(
    request: ChatModelRequest,
    options: StreamOptions,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    try {
      let first = true;
      let served = false;
      for await (const batch of batchesOf(await this.source(request, options))) {
        if (!served) {
          const token = batch.find((part) => part.type === "first-token");
          if (token !== undefined) {
            served = true;
            if (token.response_model) this.onServed(token.response_model);
          }
        }
        yield batch;
        // The client's first bytes go out before the lab records anything: the turn's work
        // runs in promise jobs, which would otherwise all run before the socket is written.
        if (first) await yieldToIo();
        first = false;
      }
      // And its last bytes before the turn's end is written.
      await yieldToIo();
    } catch (error) {
      this.lastError = error;
      throw error;
    }
  }
}

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The first upstream call of a pass-through turn, started the moment the request arrives rather
 * than when the runtime has stored the session and claimed the turn: the client's first token is
 * then the upstream's, not the upstream's plus the lab's setup. Its bytes go to the client as they
 * come; its parts wait in a queue for the runtime, which attaches when its round calls the model
 * and gets every part and every captured byte it missed.
 */
export class EarlyCall {
  readonly #controller = new AbortController();
  readonly #parts: ChatModelPart[] = [];
  #error: unknown = null;
  #done = false;
  #wake: (() => void) | null = null;
  #requestText: string | null = null;
  readonly #bytes: Uint8Array[] = [];
  #capture: StreamOptions["capture"] | null = null;
  #attached = false;
  #toolCall: (id: string, rawArguments: string) => void = () => {};
  #answered!: () => void;
  /** Settles when the upstream's first bytes arrived, or the call ended without any. */
  readonly answered = new Promise<void>((resolve) => {
    this.#answered = resolve;
  });

  constructor(
    model: ChatModel,
    request: ChatModelRequest,
    options: {
      raw_body: Record<string, unknown>;
      signal: AbortSignal;
      /** Each read of the upstream's body, as it arrives. */
      bytes: (piece: Uint8Array) => void;
      /** The upstream's stream ended (not when it failed). */
      ended: () => void;
      /** A tool call's id, as soon as the upstream wrote the whole call. */
      toolCall: (id: string, rawArguments: string) => void;
      /** This call's own fetch (StreamOptions.fetch). */
      fetch?: typeof globalThis.fetch;
    },
  ) {
    const stop = () => this.#controller.abort(options.signal.reason);
    if (options.signal.aborted) stop();
    else options.signal.addEventListener("abort", stop, { once: true });
    const capture = {
      request: (text: string) => {
        this.#requestText = text;
        this.#capture?.request(text);
      },
      response: (piece: Uint8Array | string) => {
        if (typeof piece === "string") return;
        options.bytes(piece);
        this.#answered();
        // Kept for a runtime that attaches later (its capture sink bounds what it stores).
        if (this.#attached) this.#capture?.response(piece);
        else this.#bytes.push(piece.slice());
      },
    };
    this.#toolCall = options.toolCall;
    void this.#pump(model, request, {
      raw_body: options.raw_body,
      capture,
      signal: this.#controller.signal,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    }).then(() => {
      if (this.#error === null) options.ended();
    });
  }

  async #pump(model: ChatModel, request: ChatModelRequest, options: StreamOptions): Promise<void> {
    try {
      for await (const batch of batchesOf(model.stream(request, options))) {
        for (const part of batch) {
          if (part.type === "tool-call") this.#toolCall(part.id, part.raw_arguments);
          this.#parts.push(part);
        }
        this.#wake?.();
      }
    } catch (error) {
      this.#error = error;
    } finally {
      this.#done = true;
      this.#wake?.();
      this.#answered();
    }
  }

  /** Stops the call (the turn was refused or never asked for it). */
  abort(reason: unknown): void {
    this.#controller.abort(reason);
  }

  /** The runtime's side of the call: what was captured so far, then every part in order. */
  attach(options: StreamOptions): PartStream<ChatModelPart> {
    return new PartStream(this.#attachedBatches(options));
  }

  async *#attachedBatches(
    options: StreamOptions,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    const stop = () => this.#controller.abort(options.signal?.reason);
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener("abort", stop, { once: true });
    this.#attached = true;
    const missed = this.#bytes.splice(0);
    if (options.capture) {
      if (this.#requestText !== null) options.capture.request(this.#requestText);
      for (const piece of missed) options.capture.response(piece);
      this.#capture = options.capture;
    }
    let ended = false;
    try {
      for (let index = 0; ; ) {
        if (index < this.#parts.length) {
          // Everything that arrived meanwhile, at once.
          const batch = this.#parts.slice(index);
          index = this.#parts.length;
          ended ||= batch.some((part) => part.type === "finish");
          yield batch;
          continue;
        }
        if (this.#done) break;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = null;
      }
      ended = true;
      if (this.#error !== null) throw this.#error;
    } finally {
      options.signal?.removeEventListener("abort", stop);
      // The runtime left before the call's end (its output limit): the upstream call stops, as
      // any port's does when its stream is left (ChatModel.stream).
      if (!ended) this.#controller.abort(new Error("the model call was left before its end"));
    }
  }
}
