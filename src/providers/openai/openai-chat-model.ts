import { abortableSleep } from "../../domain/abortable-sleep.js";
import { type Environment, resolveHeaders } from "../../domain/env-references.js";
import type { ChatModel, ChatModelPart, ChatModelRequest, StreamOptions } from "../chat-model.js";
import { ProviderStreamError } from "../errors.js";
import { PartStream } from "../part-stream.js";
import { estimateUsage } from "../usage-estimate.js";
import { describeFailure } from "./attempt-failure.js";
import { AttemptSignal, CallSignal } from "./attempt-signal.js";
import { CompletionStreamDecoder } from "./completion-stream-decoder.js";
import { sanitizeRequestId } from "./endpoint-message.js";
import {
  type OpenAIConfigInput,
  type ResolvedOpenAIConfig,
  resolveOpenAIConfig,
} from "./openai-config.js";
import { BodyReader, ProgressBudget } from "./read-body.js";
import { passThroughBody, renderRequestBody } from "./request-body.js";
import { retryDelayMs } from "./retry-policy.js";
import { type AttemptOutcome, sendAttempt } from "./send-attempt.js";

export interface OpenAIChatModelDependencies {
  /** Where the key and OPENAI_BASE_URL are read; default process.env. */
  env?: Environment;
  /** default globalThis.fetch (undici in Node 20). */
  fetch?: typeof globalThis.fetch;
  /** Jitter source for the backoff; default Math.random. */
  random?: () => number;
}

/**
 * A ChatModel for any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama,
 * llama.cpp server, LM Studio, OpenRouter), on plain fetch and an SSE parser.
 */
export class OpenAIChatModel implements ChatModel {
  readonly provider = "openai";
  readonly simulated = false;
  readonly model: string;
  /** The endpoint's base URL, without a trailing slash. */
  readonly baseUrl: string;
  readonly #config: ResolvedOpenAIConfig;
  // Private and never logged: the key only ever goes into the Authorization header.
  readonly #apiKey: string | null;
  readonly #env: Environment;
  readonly #fetch: typeof globalThis.fetch;
  readonly #random: () => number;
  #resolvedHeaders: Record<string, string> | null = null;

  constructor(config: OpenAIConfigInput, dependencies: OpenAIChatModelDependencies = {}) {
    this.#env = dependencies.env ?? process.env;
    const resolved = resolveOpenAIConfig(config, this.#env);
    this.#config = resolved.config;
    this.#apiKey = resolved.apiKey;
    this.model = resolved.config.model;
    this.baseUrl = resolved.config.base_url;
    this.#fetch = dependencies.fetch ?? globalThis.fetch;
    this.#random = dependencies.random ?? Math.random;
  }

  stream(request: ChatModelRequest, options: StreamOptions = {}): PartStream<ChatModelPart> {
    return new PartStream(this.#batches(request, options));
  }

  /**
   * The call, as batches of parts (one per body read): see PartStream for why. One generator,
   * not a wrapper delegating to another, for the same reason.
   */
  async *#batches(
    request: ChatModelRequest,
    options: StreamOptions,
  ): AsyncGenerator<ChatModelPart[], void, undefined> {
    options.signal?.throwIfAborted();
    const { deadline_ms } = this.#config;
    // The deadline aborts with its own error as the reason, so every place that gives way to the
    // caller's cancellation (fetch, the body read, the backoff) ends the call with it.
    const call = new CallSignal(
      options.signal,
      deadline_ms,
      () =>
        new ProviderStreamError(
          "deadline_exceeded",
          `the model call did not finish within its deadline of ${deadline_ms} ms (deadline_ms)`,
        ),
    );
    const userSignal = call.signal;
    const capture = options.capture ?? null;
    try {
      const startedAt = performance.now();
      // Pass-through sends the client's own body (every field it wrote), rendered otherwise.
      const body: { tools?: unknown } = options.raw_body
        ? passThroughBody(this.model, options.raw_body)
        : renderRequestBody(this.model, request, { send_reasoning: this.#config.send_reasoning });
      const bodyText = JSON.stringify(body);
      // The body holds no key (that goes in a header), so it can be kept as sent.
      if (capture) captureSafely(() => capture.request(bodyText));
      const { max_retries, timeout_ms, idle_timeout_ms, backoff } = this.#config;
      let headersTimeouts = 0;

      for (let attempt = 1; ; attempt += 1) {
        const signal = new AttemptSignal(userSignal);
        // TTFT is measured from here, the start of the attempt whose response is streamed, not
        // from the stream's start: time lost to failed attempts and backoff says how available
        // the endpoint was, not how fast the model answers. It is visible anyway, as the `retry`
        // parts and the gap between `elapsed_ms` and the successful attempt.
        const attemptStartedAt = performance.now();
        let outcome: AttemptOutcome;
        try {
          outcome = await sendAttempt({
            fetch: options.fetch ?? this.#fetch,
            url: `${this.baseUrl}/chat/completions`,
            base_url: this.baseUrl,
            headers: this.#headers(),
            body: bodyText,
            signal,
            timeout_ms,
            api_key: this.#apiKey,
          });
        } catch (error) {
          signal.close();
          throw error;
        }

        if (outcome.kind === "response") {
          const { response, headers_at } = outcome;
          try {
            yield [
              {
                type: "response-start",
                attempt,
                status: response.status,
                request_id: sanitizeRequestId(response.headers.get("x-request-id"), this.#apiKey),
                at_ms: roundMs(headers_at - startedAt),
                started_at: startedAt,
              },
            ];
            // From here on nothing is retried: the model may already have acted on the request.
            const decoder = new CompletionStreamDecoder({ apiKey: this.#apiKey });
            let ttftMs: number | null = null;
            if (response.body) {
              const budget = new ProgressBudget(idle_timeout_ms);
              const body = new BodyReader(response.body, signal, budget);
              try {
                reading: for (let bytes = await body.read(); bytes; bytes = await body.read()) {
                  const received = bytes;
                  if (capture) captureSafely(() => capture.response(received));
                  // Until the first token a long read (a fast server's burst of chunks) is decoded
                  // in growing slices, so the first token is handed on before the rest is parsed;
                  // the growth keeps a long wait for it (a model thinking first) to a few slices.
                  for (
                    let offset = 0, slice = FIRST_SLICE_BYTES;
                    offset < bytes.length;
                    slice *= 2
                  ) {
                    const end =
                      ttftMs === null ? Math.min(offset + slice, bytes.length) : bytes.length;
                    const progressBefore = decoder.progress;
                    // A view only when slicing: one per read cost more than the read's chunk.
                    const parts: ChatModelPart[] = decoder.push(
                      offset === 0 && end === bytes.length ? bytes : bytes.subarray(offset, end),
                    );
                    offset = end;
                    if (decoder.progress !== progressBefore) budget.progressed();
                    if (ttftMs === null) {
                      // TTFT stays the time to the answer (or a tool call): thinking comes first.
                      const first = parts.findIndex((part) => part.type !== "reasoning-delta");
                      if (first !== -1) {
                        ttftMs = roundMs(body.receivedAt - attemptStartedAt);
                        parts.splice(first, 0, {
                          type: "first-token",
                          ttft_ms: ttftMs,
                          response_model: decoder.responseModel,
                        });
                      }
                    }
                    if (parts.length > 0) yield parts;
                    if (decoder.finished) break reading;
                  }
                }
              } finally {
                body.close();
              }
            }
            // Taken before the closing parts are yielded, so a consumer that dwells on them does not
            // lengthen the call. (Parts are pulled, so a consumer that stalls mid-stream still does.)
            const endedAt = performance.now();
            const summary = decoder.end();
            const closing: ChatModelPart[] = [];
            for (const part of summary.deltas) {
              if (ttftMs === null && part.type !== "reasoning-delta") {
                ttftMs = roundMs(endedAt - attemptStartedAt);
                closing.push({ type: "first-token", ttft_ms: ttftMs });
              }
              closing.push(part);
            }
            closing.push(...summary.tool_calls);
            const reported = summary.usage;
            closing.push(
              reported
                ? {
                    type: "usage",
                    usage: reported.usage,
                    estimated: false,
                    source: reported.source,
                    cost_usd: reported.cost_usd,
                    raw: reported.raw,
                  }
                : {
                    type: "usage",
                    usage: estimateUsage(
                      request.messages,
                      // The tools as sent: the client's own list in pass-through.
                      body.tools ? JSON.stringify(body.tools) : "",
                      {
                        ...summary,
                        tool_arguments: summary.tool_calls.map((call) => call.raw_arguments),
                      },
                    ),
                    estimated: true,
                    source: "estimated",
                    cost_usd: null,
                    raw: null,
                  },
            );
            closing.push({
              type: "finish",
              finish_reason: summary.finish_reason,
              ttft_ms: ttftMs,
              elapsed_ms: roundMs(endedAt - startedAt),
              attempts: attempt,
              response_model: summary.response_model,
              response_id: summary.response_id,
              system_fingerprint: summary.system_fingerprint,
            });
            yield closing;
            return;
          } finally {
            // Covers break, throw and abort alike: no body or socket outlives the stream.
            signal.close();
          }
        }

        signal.close();
        const failure = describeFailure(outcome, {
          attempts: attempt,
          max_retries,
          base_url: this.baseUrl,
          api_key_env: this.#config.api_key_env,
          key_sent: this.#apiKey !== null,
        });
        if (outcome.kind === "connection-error" && outcome.headers_timeout) headersTimeouts += 1;
        // A second wait for headers in vain ends the call: the endpoint is down or overloaded.
        if (attempt > failure.retry_limit || headersTimeouts >= 2) throw failure.error;
        const delay_ms = Math.min(
          retryDelayMs(
            attempt - 1,
            outcome.kind === "http-error" ? outcome.headers : null,
            backoff,
            this.#random,
          ),
          failure.max_delay_ms,
        );
        yield [
          { type: "retry", attempt, status: failure.status, reason: failure.reason, delay_ms },
        ];
        await abortableSleep(delay_ms, userSignal);
      }
    } finally {
      call.close();
    }
  }

  /**
   * Resolved on the first call, not in the constructor, so a header naming an unset variable fails
   * the call that needs it; then kept, as a plain record: a Headers object rebuilt and copied for
   * every call was a tenth of the adapter's fixed cost per call.
   */
  #headers(): Record<string, string> {
    if (this.#resolvedHeaders === null) {
      const headers = new Headers(
        resolveHeaders(this.#config.headers, this.#env, "openai config: headers"),
      );
      headers.set("content-type", "application/json");
      headers.set("accept", "text/event-stream");
      if (this.#apiKey) headers.set("authorization", `Bearer ${this.#apiKey}`);
      this.#resolvedHeaders = Object.fromEntries(headers);
    }
    return this.#resolvedHeaders;
  }
}

/** About ten typical chunks. */
const FIRST_SLICE_BYTES = 2048;

/** Capture is for inspection: a failing capture must not fail the call it watches. */
function captureSafely(record: () => void): void {
  try {
    record();
  } catch {
    // The payload record will be incomplete; the call itself is unaffected.
  }
}

/** Tenths of a millisecond: finer than any network jitter, coarser than float noise. */
function roundMs(milliseconds: number): number {
  return Math.round(milliseconds * 10) / 10;
}
