import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { redactKnownSecrets } from "../../domain/secrets.js";
import { type TokenUsage, tokenUsage } from "../../domain/usage.js";
import type { ClientCall } from "./client-tools.js";
import { CompletionChunkWriter, newCompletionId, renderCompletion } from "./completion-chunks.js";
import { ForwardEvents } from "./forward-events.js";
import type { GatewaySegment, SegmentFinish } from "./gateway-segment.js";
import {
  isUpstreamFailure,
  openAIErrorEvent,
  openAIErrorResponse,
  toOpenAIError,
} from "./openai-error.js";
import { SecretScrubber } from "./secret-scrubber.js";

export interface HttpSegmentOptions {
  /** The client asked for a stream. */
  stream: boolean;
  /** The client's `stream_options.include_usage`. */
  include_usage: boolean;
  /** The model the client asked for, echoed in every chunk as OpenAI does. */
  model: string;
  /** Told of failures the client hears of only as a generic 500 (the server's log). */
  report?: (error: unknown) => void;
  /** Told when the request failed before any of its answer went out, with its status. */
  unanswered?: (status: number) => void;
  /**
   * The request's Node response, when served by @hono/node-server: a stream is written to it
   * directly (see #start) with `head`, made once by `streamHead`.
   */
  direct?: { outgoing: ServerResponse; head: Readonly<Record<string, string>> } | undefined;
}

/** The most of an upstream's first read that goes out first (see bytes). */
const FIRST_WRITE_BYTES = 2048;

const ENCODER = new TextEncoder();

/** Longer answers are not kept for a retry (it then runs as a new turn). */
const MAX_REPLAY_BYTES = 1024 * 1024;

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  // Said up front, @hono/node-server writes the headers and the first bytes at once; otherwise it
  // reads ahead to size the body and, finding no second chunk yet, waits a timer tick, which a
  // turn busy recording its call delays by milliseconds.
  "transfer-encoding": "chunked",
};

/**
 * A gateway segment as one HTTP response. Nothing is committed before the first output: a turn
 * that fails first (an upstream 429, a refused session) still answers with the upstream's status
 * and an error body; once streaming, a failure becomes an error event and the stream ends.
 */
export class HttpSegment implements GatewaySegment {
  /** Settles with the response as soon as it can start (or fail). */
  readonly response: Promise<Response>;
  #resolve!: (response: Response) => void;
  readonly #options: HttpSegmentOptions;
  #controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** The Node response a stream is written to, once started directly. */
  #outgoing: ServerResponse | null = null;
  #started = false;
  #ended = false;
  #passThrough = false;
  #forward: ForwardEvents | null = null;
  #scrubber: SecretScrubber | null = null;
  /** The model the endpoint named for the segment's chat call, once known. */
  #served: string | null = null;
  #writer: CompletionChunkWriter | null = null;
  #onDisconnect: (() => void) | null = null;
  #disconnected = false;
  /** The last two bytes sent: an error event must start at an event's boundary. */
  #tail = "";
  // A non-streaming answer, gathered.
  #text = "";
  #reasoning = "";
  #refusal = "";
  #usage: TokenUsage = tokenUsage();
  /** Made when a rendered answer needs it: a pass-through answer keeps the upstream's ids. */
  #completionId: string | null = null;
  /** What the client was sent, for answering a retry of this request the same way. */
  #sent: Uint8Array[] = [];
  #sentBytes = 0;
  #json: unknown = null;
  #succeeded = false;

  constructor(options: HttpSegmentOptions) {
    this.#options = options;
    this.response = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  get #id(): string {
    this.#completionId ??= newCompletionId();
    return this.#completionId;
  }

  get forwardsBytes(): boolean {
    return this.#passThrough && this.#options.stream;
  }

  get ended(): boolean {
    return this.#ended;
  }

  adopt(options: { pass_through: boolean; onDisconnect: () => void }): void {
    this.#passThrough = options.pass_through;
    // The client left before a turn took this request: that turn stops as soon as it starts.
    if (this.#disconnected) {
      options.onDisconnect();
      return;
    }
    this.#onDisconnect = options.onDisconnect;
    // The lab's own keys never reach the client, whatever the model or the upstream wrote.
    this.#scrubber = new SecretScrubber();
    if (this.forwardsBytes) {
      this.#forward = new ForwardEvents({ client_include_usage: this.#options.include_usage });
    } else if (this.#options.stream) {
      this.#writer = new CompletionChunkWriter({
        model: this.#options.model,
        id: this.#id,
        include_usage: this.#options.include_usage,
      });
    }
  }

  /** The client's connection closed: before the end, the turn is told (it stops). */
  disconnected(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#disconnected = true;
    this.#resolve(new Response(null, { status: 499 }));
    this.#onDisconnect?.();
    this.#onDisconnect = null;
  }

  bytes(piece: Uint8Array): void {
    if (this.#ended || this.#forward === null) return;
    const out: Uint8Array[] = [];
    if (!this.#started && piece.length > FIRST_WRITE_BYTES) {
      // A fast upstream's first read holds many events: the first few go out (with the head)
      // before the rest is scanned and sent, and the client, which parses a whole read before it
      // sees the head, gets a small one first.
      this.#forward.pushInto(piece.subarray(0, FIRST_WRITE_BYTES), out);
      this.#writeAll(this.#scrubbed(out));
      out.length = 0;
      piece = piece.subarray(FIRST_WRITE_BYTES);
    }
    this.#forward.pushInto(piece, out);
    this.#writeAll(this.#scrubbed(out));
  }

  /** The lab's own keys never reach the client, even where the upstream quotes them. */
  #scrubbed(pieces: Uint8Array[]): Uint8Array[] {
    const scrubber = this.#scrubber;
    if (scrubber !== null) {
      for (let index = 0; index < pieces.length; index++) {
        pieces[index] = scrubber.push(pieces[index] as Uint8Array);
      }
    }
    return pieces;
  }

  endBytes(): void {
    if (this.#ended || this.#forward === null) return;
    this.#writeAll(this.#scrubbed([this.#forward.end()]));
    this.#succeeded = true;
    this.#close();
  }

  /**
   * The same answer again, for a client's retry of a request whose answer it lost: null unless
   * this segment ended well and its answer was small enough to keep.
   */
  replay(): Response | null {
    if (!this.#succeeded || this.#sentBytes > MAX_REPLAY_BYTES) return null;
    if (this.#json !== null) return jsonAnswer(this.#json);
    const pieces = this.#sent;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(piece);
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  }

  /** What is kept to answer a retry, in bytes. */
  get replayBytes(): number {
    return this.#succeeded && this.#sentBytes <= MAX_REPLAY_BYTES ? this.#sentBytes : 0;
  }

  /** Still answering (its retry must wait, not run the turn a second time). */
  get pending(): boolean {
    return !this.#ended;
  }

  text(delta: string): void {
    if (this.#ended) return;
    if (this.#writer) this.#write(this.#writer.text(delta));
    else this.#text += delta;
  }

  reasoning(delta: string): void {
    if (this.#ended) return;
    if (this.#writer) this.#write(this.#writer.reasoning(delta));
    else this.#reasoning += delta;
  }

  refusal(delta: string): void {
    if (this.#ended) return;
    if (this.#writer) this.#write(this.#writer.refusal(delta));
    else this.#refusal += delta;
  }

  usage(usage: TokenUsage): void {
    this.#usage = addUsage(this.#usage, usage);
  }

  servedBy(model: string): void {
    this.#served = model;
    if (this.#writer) this.#writer.model = model;
  }

  finish(reason: SegmentFinish, calls: readonly ClientCall[]): void {
    if (this.#ended) return;
    const writer = this.#writer;
    if (writer) {
      let text = "";
      for (const call of calls) text += writer.toolCall(call);
      this.#write(text + writer.finish(reason, this.#usage));
      this.#succeeded = true;
      this.#close();
      return;
    }
    this.#ended = true;
    this.#succeeded = true;
    this.#onDisconnect = null;
    // As OpenAI answers: the model that served it (a streamed answer's chunks say so too).
    this.#json = renderCompletion(
      { model: this.#served ?? this.#options.model, id: this.#id },
      {
        content: this.#text,
        ...(this.#reasoning === "" ? {} : { reasoning: this.#reasoning }),
        ...(this.#refusal === "" ? {} : { refusal: this.#refusal }),
        tool_calls: calls,
        finish_reason: reason,
        usage: this.#usage,
      },
    );
    this.#resolve(jsonAnswer(this.#json));
  }

  fail(error: unknown): void {
    if (this.#ended) {
      // The client has its whole answer (pass-through streams it as it comes) and will hear of
      // nothing: a turn the lab could not record is for the server's log to say.
      if (this.#succeeded) this.#options.report?.(error);
      return;
    }
    const failure = toOpenAIError(error);
    // An upstream's own 500 is the upstream's to report, and its client has it: not the lab's.
    if (failure.status === 500 && !isUpstreamFailure(error)) this.#options.report?.(error);
    if (!this.#started) {
      this.#ended = true;
      this.#onDisconnect = null;
      this.#resolve(openAIErrorResponse(failure));
      this.#options.unanswered?.(failure.status);
      return;
    }
    // A stream cut mid-event (pass-through) is closed first, so the error parses as an event.
    const boundary =
      this.#tail === "" || this.#tail.endsWith("\n\n") || this.#tail.endsWith("\r\r");
    this.#write(`${boundary ? "" : "\n\n"}${openAIErrorEvent(failure)}`);
    this.#close();
  }

  /** A rendered piece (scrubbed), or bytes of the segment's own (an error event, held bytes). */
  #write(data: Uint8Array | string): void {
    if (typeof data === "string") this.#writeAll(this.#scrubbed([ENCODER.encode(data)]), true);
    else this.#writeAll([data], false);
  }

  /**
   * The pieces in a row, sent together (pass-through hands a read's events as a few views);
   * `owned` when they are the segment's own bytes, not views of the adapter's buffers.
   */
  #writeAll(pieces: readonly Uint8Array[], owned = false): void {
    let wrote = false;
    for (const bytes of pieces) {
      if (bytes.length === 0) continue;
      this.#start();
      // A piece not ours (a view of a buffer its reader may reuse once we return) is copied.
      const piece = owned ? bytes : bytes.slice();
      if (this.#outgoing !== null) {
        if (!this.#outgoing.destroyed) this.#outgoing.write(piece);
      } else this.#controller?.enqueue(piece);
      wrote = true;
      this.#tail = (this.#tail + String.fromCharCode(...piece.subarray(-2))).slice(-2);
      this.#sentBytes += piece.length;
      if (this.#sentBytes <= MAX_REPLAY_BYTES) this.#sent.push(piece);
      else this.#sent = [];
    }
    const outgoing = this.#outgoing;
    if (!wrote || outgoing === null || outgoing.destroyed) return;
    const socket = outgoing.socket;
    if (socket !== null && socket.writableCorked > 0) {
      // Node corks the socket for a response's writes and uncorks it on the next tick, which
      // waits for every promise job queued meanwhile: the adapter decoding the rest of the read
      // (a fast upstream's first read holds hundreds of events), milliseconds before the client
      // gets its first token. The bytes go now, the pieces of one read together.
      socket.uncork();
    }
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    const direct = this.#options.direct;
    if (direct !== undefined) {
      // Written straight to the socket: the head goes out with the first bytes, in one packet,
      // without the Response, its body stream and the adapter's read loop between (about half a
      // millisecond of the client's first token, and a promise per write).
      this.#outgoing = direct.outgoing;
      direct.outgoing.writeHead(200, direct.head);
      // Tells @hono/node-server the response is written already.
      this.#resolve(RESPONSE_ALREADY_SENT);
      return;
    }
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => this.disconnected(),
    });
    this.#resolve(new Response(body, { status: 200, headers: SSE_HEADERS }));
  }

  #close(): void {
    // What the scrubber held back could have begun a key; the stream ended without one.
    const held = this.#scrubber?.end();
    if (held !== undefined && held.length > 0) this.#writeAll([held], true);
    this.#ended = true;
    // An ended segment holds nothing of its turn (a retry ledger may keep it a while).
    this.#onDisconnect = null;
    if (!this.#started) {
      // Nothing to say (an upstream that sent only a usage event the client did not ask for).
      this.#start();
    }
    if (this.#outgoing !== null) {
      if (!this.#outgoing.destroyed) this.#outgoing.end();
    } else this.#controller?.close();
  }
}

/**
 * The head of a stream written past Hono: what the lab's middleware puts on every response (which
 * such a response would not get otherwise) and the stream's own headers.
 */
export function streamHead(
  middleware: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  return { ...middleware, ...SSE_HEADERS };
}

function addUsage(left: TokenUsage, right: TokenUsage): TokenUsage {
  return {
    prompt_tokens: left.prompt_tokens + right.prompt_tokens,
    completion_tokens: left.completion_tokens + right.completion_tokens,
    total_tokens: left.total_tokens + right.total_tokens,
    cached_tokens: left.cached_tokens + right.cached_tokens,
    reasoning_tokens: left.reasoning_tokens + right.reasoning_tokens,
    cache_write_tokens: left.cache_write_tokens + right.cache_write_tokens,
  };
}

/** A rendered answer as JSON, with the lab's own keys blanked wherever the model wrote one. */
function jsonAnswer(json: unknown): Response {
  return new Response(redactKnownSecrets(JSON.stringify(json)), {
    status: 200,
    headers: { "content-type": "application/json" },
  });
}
