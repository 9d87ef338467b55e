import type { ChatToolDefinition } from "../domain/chat-tool.js";
import type { ChatMessage } from "../domain/messages.js";
import type { TokenUsage, UsageSource } from "../domain/usage.js";

/**
 * The one port between the runtime and any model. Adapters (`openai`, `sim`) implement it; the
 * runtime never sees an adapter. Modelled on the AI SDK's LanguageModel stream parts, reduced to
 * what the lab measures.
 */

// The tool shape belongs to the domain (tools and the runtime build it); re-exported for adapters.
export type { ChatToolDefinition } from "../domain/chat-tool.js";

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export type ResponseFormat =
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface ChatModelRequest {
  messages: readonly ChatMessage[];
  tools?: readonly ChatToolDefinition[];
  tool_choice?: ToolChoice;
  response_format?: ResponseFormat;
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
  seed?: number;
  /** Up to four sequences that end the answer where they would begin (finish reason "stop"). */
  stop?: readonly string[];
  /**
   * Groups requests of one conversation (the session id). No adapter reads it today; it is there
   * for one that routes or caches by conversation (OpenAI's `prompt_cache_key`, say).
   */
  conversation_id?: string;
}

export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | (string & {});

/**
 * What a stream yields, in order: zero or more `retry` parts (failed attempts before any byte of a
 * response), one `response-start`, deltas (the first answer, refusal or tool-call delta is
 * preceded by `first-token`; reasoning deltas may come before it, since thinking is not the
 * answer's first token), assembled `tool-call`s, one `usage`, and a closing `finish`. A stream that cannot finish throws
 * a typed provider error instead of yielding `finish`.
 */
export type ChatModelPart =
  | {
      type: "retry";
      /** The attempt that failed, from 1. */
      attempt: number;
      status: number | null;
      reason: string;
      delay_ms: number;
    }
  | {
      type: "response-start";
      attempt: number;
      status: number;
      request_id: string | null;
      /** Milliseconds from the stream's start until the response headers arrived. */
      at_ms: number;
      /**
       * `performance.now()` when the stream began, in this process. A call whose parts its
       * consumer reads late (the gateway starts one before the runtime asks for it) is still timed
       * from its start when it fails.
       */
      started_at?: number;
    }
  | {
      type: "first-token";
      ttft_ms: number;
      /**
       * The model the endpoint says serves the call, when it said so by then (its first chunk):
       * the finish part's `response_model`, known early, for what streams on to a client.
       */
      response_model?: string | null;
    }
  | { type: "text-delta"; text: string }
  /** Thinking, wherever the provider put it; never part of the answer's text. */
  | { type: "reasoning-delta"; text: string }
  /** A refusal (`delta.refusal`); never part of the answer's text either. */
  | { type: "refusal-delta"; text: string }
  | {
      type: "tool-call-delta";
      index: number;
      id: string | null;
      name: string | null;
      arguments_delta: string;
    }
  | { type: "tool-call"; index: number; id: string; name: string; raw_arguments: string }
  | {
      type: "usage";
      /** Normalized: prompt + completion = total, reasoning inside completion. */
      usage: TokenUsage;
      /** True when the endpoint reported no usage and the lab counted with its tokenizer. */
      estimated: boolean;
      source: UsageSource;
      /** The cost the provider reported (OpenRouter's `usage.cost`), in USD; null when none. */
      cost_usd: number | null;
      /** The provider's usage object (and `timings`) as received; null when none came. */
      raw: Record<string, unknown> | null;
    }
  | {
      type: "finish";
      finish_reason: FinishReason;
      /** From sending the request to the first content or tool-call delta; null if none came. */
      ttft_ms: number | null;
      elapsed_ms: number;
      attempts: number;
      /** The chunks' `model`, `id` and `system_fingerprint`: who actually answered. */
      response_model: string | null;
      response_id: string | null;
      system_fingerprint: string | null;
    };

/**
 * Receives a call's wire traffic as it happens (payload capture). The request body once, before
 * it is sent; the response as it arrives. The sim renders what an endpoint would have sent.
 */
export interface CallCapture {
  request(body: string): void;
  response(chunk: Uint8Array | string): void;
}

export interface StreamOptions {
  signal?: AbortSignal;
  capture?: CallCapture;
  /**
   * Pass-through (the gateway): the client's own Chat Completions request body, sent instead of
   * one rendered from `request.messages`, so every field the lab does not model (response_format,
   * seed, content-part arrays, `name`, vendor extensions) reaches the endpoint as the client wrote
   * it. The `openai` adapter changes exactly three fields: `model` (its own), `stream: true` and
   * `stream_options.include_usage: true` (the lab records usage whatever the client asked). The
   * request's `messages` and `tools` still describe the call, for the usage estimate when the
   * endpoint reports none. The sim ignores it: it has no wire, and answers from `request.messages`.
   */
  raw_body?: Readonly<Record<string, unknown>>;
  /**
   * Pass-through (the gateway): the fetch of this call only, instead of the model's own (one that
   * hands the response's reads to the client as they arrive). The sim has no wire and ignores it.
   */
  fetch?: typeof globalThis.fetch;
}

export interface ChatModel {
  /** "openai" or "sim". */
  readonly provider: string;
  /** The model name sent to the endpoint (or the simulated model's name). */
  readonly model: string;
  /** True for the embedded simulated model: its numbers describe no real endpoint. */
  readonly simulated: boolean;
  /** Where the calls go, resolved (config or environment); absent for the simulated model. */
  readonly baseUrl?: string | undefined;
  /**
   * The call's parts. A consumer that leaves the iteration early (`break`, a throw: the
   * iterator's `return()`) ends the call: the port stops its request then, as it does when the
   * signal aborts. The runtime cuts a call at its output limit that way, keeping the turn's signal.
   */
  stream(request: ChatModelRequest, options?: StreamOptions): AsyncIterable<ChatModelPart>;
}

/**
 * A stream that can also be read a batch at a time (the OpenAI adapter's: one batch per body
 * read), so a consumer that handles parts in a plain loop pays no promise job per part.
 */
export interface BatchedPartStream extends AsyncIterable<ChatModelPart> {
  batches(): AsyncIterable<readonly ChatModelPart[]>;
}

export function hasBatches(stream: AsyncIterable<ChatModelPart>): stream is BatchedPartStream {
  return typeof (stream as Partial<BatchedPartStream>).batches === "function";
}
