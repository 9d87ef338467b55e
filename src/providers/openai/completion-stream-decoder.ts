import { randomUUID } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import { describeIssues } from "../../domain/validation.js";
import type { ChatModelPart, FinishReason } from "../chat-model.js";
import { ProviderStreamError } from "../errors.js";
import {
  CompletionChunk,
  contentText,
  contentThinking,
  deltaReasoning,
  type Fields,
  isCommonChunk,
  isObject,
  type ToolCallChunk,
} from "./chunk-schema.js";
import { ChunkTemplate } from "./chunk-template.js";
import { endpointMessageFromValue, sanitizeIdentity } from "./endpoint-message.js";
import { ThinkTagSplitter } from "./think-tag-splitter.js";
import { hasUsageCounts, type NormalizedUsage, normalizeUsage } from "./usage-normalization.js";

/**
 * The pure heart of the adapter: Chat Completions SSE bytes in, port parts out. No timers, no I/O,
 * no clock, so it can be fed any split of a byte stream (the property test does) and must give the
 * same parts for each. The adapter adds what needs a clock or a connection (`response-start`,
 * `first-token`, `finish` timings, the usage estimate).
 */

export type DeltaPart = Extract<
  ChatModelPart,
  { type: "text-delta" | "reasoning-delta" | "refusal-delta" | "tool-call-delta" }
>;
export type ToolCallPart = Extract<ChatModelPart, { type: "tool-call" }>;

export interface CompletionSummary {
  /**
   * Deltas completed only by the end: a last event without its blank line, content held back as a
   * possible `<think>` tag. They come after every delta `push` returned.
   */
  deltas: DeltaPart[];
  finish_reason: FinishReason;
  /** One per tool-call index, in index order. */
  tool_calls: ToolCallPart[];
  /** All text deltas joined: the answer. */
  text: string;
  /** All reasoning deltas joined. */
  reasoning: string;
  /** All refusal deltas joined. */
  refusal: string;
  /** As the endpoint reported it (usage or llama.cpp timings), normalized; null when it sent none. */
  usage: NormalizedUsage | null;
  /** The chunks' first `model` and `id`, last `system_fingerprint`; sanitized, null when absent. */
  response_model: string | null;
  response_id: string | null;
  system_fingerprint: string | null;
}

interface ToolCallState {
  id: string | null;
  name: string | null;
  arguments: string;
}

export interface DecoderOptions {
  /** Blanked out of any endpoint message that ends up in an error. */
  apiKey?: string | null;
  /** For tool calls whose endpoint sent no id (some local servers); must be unique per call. */
  createToolCallId?: (index: number) => string;
  /**
   * Chunks that repeat the last one's text around new content are read without JSON.parse (see
   * chunk-template.ts); false parses every chunk, which gives the same parts, only slower.
   */
  reuseChunkText?: boolean;
}

/**
 * Templates made (or tried in vain) before any was used: a stream's first content chunk often
 * carries the role, and a thinking model's reasoning chunks differ from its answer's. Past these,
 * a new one is made only once the last has served a while, so a stream whose every chunk differs
 * (a timestamp per chunk) stops paying trial parses per chunk for nothing.
 */
const FREE_TEMPLATES = 4;
const TEMPLATE_SERVICE = 16;

export class CompletionStreamDecoder {
  // Node's StringDecoder, not TextDecoder: the same text for every split of the bytes (complete
  // characters only, U+FFFD for invalid bytes as WHATWG says), at a quarter of the cost, which on
  // a long stream was a tenth of all the decoding. It keeps a leading BOM, which TextDecoder drops
  // and SSE says to drop, so `#withoutBom` does.
  readonly #utf8 = new StringDecoder("utf8");
  #started = false;
  readonly #parser: EventSourceParser;
  readonly #apiKey: string | null;
  readonly #createToolCallId: (index: number) => string;
  readonly #toolCalls = new Map<number, ToolCallState>();
  #lastToolCallIndex: number | null = null;
  #pending: DeltaPart[] = [];
  #failure: ProviderStreamError | null = null;
  #finishReason: FinishReason | null = null;
  #usage: Fields | null = null;
  #timings: Fields | null = null;
  #responseModel: string | null = null;
  #responseId: string | null = null;
  #fingerprint: string | null = null;
  readonly #thinkTags = new ThinkTagSplitter();
  #text = "";
  #reasoning = "";
  #refusal = "";
  #done = false;
  #ending = false;
  #progress = 0;
  readonly #reuseChunkText: boolean;
  #template: ChunkTemplate | null = null;
  #templatesMade = 0;
  #templateUses = 0;

  constructor(options: DecoderOptions = {}) {
    this.#apiKey = options.apiKey ?? null;
    this.#reuseChunkText = options.reuseChunkText ?? true;
    this.#createToolCallId =
      options.createToolCallId ?? (() => `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`);
    this.#parser = createParser({ onEvent: (event) => this.#onEvent(event) });
  }

  /**
   * True once nothing more needs reading: `data: [DONE]` arrived, or the stream failed. The
   * reader should stop and call `end()`, which reports the failure; waiting for more bytes
   * could mean waiting for an idle timeout on a stream that is already lost.
   */
  get finished(): boolean {
    return this.#done || this.#failure !== null;
  }

  /**
   * Grows with every sign that the model is producing: content, refusal, reasoning or tool-call
   * deltas, the finish reason, usage after it, `[DONE]`. Role-only or empty chunks, comments and
   * unknown events leave it alone, so an idle timer fed by it ignores keep-alives.
   */
  get progress(): number {
    return this.#progress;
  }

  /**
   * Feeds raw bytes (any split, even inside a UTF-8 character); returns the deltas they
   * completed. Deltas before a failure in the same bytes are still returned (they did stream);
   * the failure itself is thrown by `end()` (or by a later `push`).
   */
  push(bytes: Uint8Array): DeltaPart[] {
    if (this.#failure) throw this.#failure;
    if (!this.#done) this.#parser.feed(this.#withoutBom(this.#utf8.write(bytes)));
    return this.#drain();
  }

  /**
   * Closes the stream. Throws the stream's failure, or `no_finish_reason` when the endpoint never
   * said why it stopped: a cut stream must not pass for a complete answer.
   *
   * The last event is kept even when the stream ends before its blank line (`\n`, `\r\n`, a lone
   * `\r`, or nothing after the data): everything arrived, and the finish reason is usually in it.
   * The SSE spec, openai-node and eventsource-parser's stream all drop such an event; we complete
   * it instead, but only if it is whole JSON: an event cut in the middle is still a cut stream.
   */
  end(): CompletionSummary {
    if (!this.finished) {
      this.#parser.feed(this.#withoutBom(this.#utf8.end()));
      this.#ending = true;
      // Ends a pending line (even one whose `\r` may have been the first half of `\r\n`),
      // then the event.
      this.#parser.feed("\n\n");
    }
    if (!this.#failure) this.#emitContent(this.#thinkTags.end());
    const deltas = this.#drain();
    if (this.#failure) throw this.#failure;
    if (this.#finishReason === null) {
      throw new ProviderStreamError(
        "no_finish_reason",
        "the model stream ended without a finish reason; the answer may be cut short",
      );
    }
    const tool_calls = [...this.#toolCalls.entries()]
      .sort(([left], [right]) => left - right)
      .map(
        ([index, call]): ToolCallPart => ({
          type: "tool-call",
          index,
          id: call.id ?? this.#createToolCallId(index),
          name: call.name ?? "",
          raw_arguments: call.arguments,
        }),
      );
    return {
      deltas,
      finish_reason: this.#finishReason,
      tool_calls,
      text: this.#text,
      reasoning: this.#reasoning,
      refusal: this.#refusal,
      usage: normalizeUsage(this.#usage, this.#timings),
      response_model: sanitizeIdentity(this.#responseModel, this.#apiKey),
      response_id: sanitizeIdentity(this.#responseId, this.#apiKey),
      system_fingerprint: sanitizeIdentity(this.#fingerprint, this.#apiKey),
    };
  }

  #withoutBom(text: string): string {
    if (this.#started || text.length === 0) return text;
    this.#started = true;
    return text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
  }

  #drain(): DeltaPart[] {
    const parts = this.#pending;
    this.#pending = [];
    return parts;
  }

  // Called by the SSE parser inside `feed`; failures are parked and thrown from `end`, so the
  // parser never sees our exceptions.
  #onEvent(event: EventSourceMessage): void {
    if (this.#done || this.#failure) return;
    const name = event.event;
    if (name !== undefined && name !== "message") {
      if (name === "error")
        this.#fail("error_event", this.#errorEventMessage(parseJson(event.data)));
      // Named events other than `message` are not part of the Chat Completions protocol.
      return;
    }
    const { data } = event;
    // A chunk starts with `{`; only other data can be the end marker (trimming every chunk costs).
    if (data.charCodeAt(0) !== OPENING_BRACE && data.trim() === "[DONE]") {
      this.#progress++;
      this.#done = true;
      return;
    }
    const template = this.#template;
    const match = template === null ? null : template.match(data);
    if (template !== null && match !== null && match !== "escaped") {
      // The template's chunk with other strings: its identity fields, this delta, nothing else.
      this.#templateUses++;
      this.#noteIdentity(template.value);
      this.#onDelta(match);
      return;
    }
    const value = parseJson(data);
    // An unterminated last event that is not whole JSON was cut, not malformed.
    if (value === NOT_JSON && this.#ending) return;
    if (value === NOT_JSON) {
      this.#fail("malformed_json", "the model stream sent a chunk that is not valid JSON");
      return;
    }
    let chunk: CompletionChunk;
    if (isCommonChunk(value)) {
      chunk = value;
    } else {
      const parsed = CompletionChunk.safeParse(value);
      if (!parsed.success) {
        this.#fail(
          "malformed_json",
          `the model stream sent a chunk that is not a chat completion chunk (${describeIssues(parsed.error)})`,
        );
        return;
      }
      chunk = parsed.data;
    }
    if (chunk.error !== null && chunk.error !== undefined) {
      this.#fail("error_event", this.#errorEventMessage(chunk));
      return;
    }
    this.#noteIdentity(value as Fields);
    if (chunk.usage) {
      // The last usage object with counts wins (vLLM's continuous usage sends one per chunk).
      if (hasUsageCounts(chunk.usage)) this.#usage = chunk.usage;
      if (this.#finishReason !== null) this.#progress++;
    }
    // llama.cpp's server-side figures, on its last chunk: the usage of last resort.
    const timings = (value as Fields).timings;
    if (timings !== undefined && isObject(timings)) this.#timings = timings;
    for (const choice of chunk.choices ?? []) {
      // We never ask for n > 1; other choices would be another answer, not more of this one.
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta;
      if (delta) this.#onDelta(delta);
      if (choice.finish_reason) {
        this.#finishReason = choice.finish_reason;
        this.#progress++;
      }
    }
    if (
      this.#reuseChunkText &&
      chunk === value &&
      match === null &&
      (this.#templatesMade < FREE_TEMPLATES || this.#templateUses >= TEMPLATE_SERVICE)
    ) {
      const made = ChunkTemplate.of(data, value);
      // Trial parses spent in vain count as a template made: a stream of chunks whose cuts are
      // never found (repeated keys) must not pay them on every chunk.
      if (made !== null) {
        if (made !== "failed") this.#template = made;
        this.#templatesMade++;
        this.#templateUses = 0;
      }
    }
  }

  /** Reasoning (wherever the provider put it), then the answer, then a refusal, then tool calls. */
  #onDelta(delta: NonNullable<NonNullable<CompletionChunk["choices"]>[number]["delta"]>): void {
    const { content } = delta;
    let reasoning = deltaReasoning(delta);
    let text = "";
    if (typeof content === "string") {
      text = content;
    } else if (content !== null && content !== undefined) {
      text = contentText(content);
      reasoning += contentThinking(content);
    }
    if (reasoning.length > 0) this.#emitReasoning(reasoning);
    if (text.length > 0) {
      // Past the start (nearly every chunk), content is answer: no split, no allocation.
      if (this.#thinkTags.passing) this.#emitText(text);
      else this.#emitContent(this.#thinkTags.push(text));
    }
    const { refusal } = delta;
    if (typeof refusal === "string" && refusal.length > 0) {
      this.#refusal += refusal;
      this.#pending.push({ type: "refusal-delta", text: refusal });
      this.#progress++;
    }
    const toolCalls = delta.tool_calls;
    if (toolCalls) for (const call of toolCalls) this.#onToolCallDelta(call);
  }

  #emitReasoning(text: string): void {
    this.#reasoning += text;
    this.#pending.push({ type: "reasoning-delta", text });
    // Not the answer, but a model that thinks aloud is not stalled.
    this.#progress++;
  }

  #emitContent(split: { reasoning: string; text: string }): void {
    if (split.reasoning.length > 0) this.#emitReasoning(split.reasoning);
    if (split.text.length > 0) this.#emitText(split.text);
  }

  #emitText(text: string): void {
    this.#text += text;
    this.#pending.push({ type: "text-delta", text });
    this.#progress++;
  }

  /** The model the endpoint named so far, sanitized (null before its first chunk says). */
  get responseModel(): string | null {
    return sanitizeIdentity(this.#responseModel, this.#apiKey);
  }

  /** Raw strings, sanitized once at the end: this runs for every chunk. */
  #noteIdentity(value: Fields): void {
    if (this.#responseId === null) {
      const { id } = value;
      if (typeof id === "string" && id !== "") this.#responseId = id;
    }
    if (this.#responseModel === null) {
      const { model } = value;
      if (typeof model === "string" && model !== "") this.#responseModel = model;
    }
    const fingerprint = value.system_fingerprint;
    if (typeof fingerprint === "string" && fingerprint !== "") this.#fingerprint = fingerprint;
  }

  #onToolCallDelta(call: ToolCallChunk): void {
    const index = this.#resolveIndex(call);
    this.#lastToolCallIndex = index;
    let state = this.#toolCalls.get(index);
    if (!state) {
      state = { id: null, name: null, arguments: "" };
      this.#toolCalls.set(index, state);
    }
    // Some servers repeat id and name on every delta; the port wants them once, on the first.
    const fn = call.function;
    const id = state.id === null && call.id ? call.id : null;
    const name = state.name === null && fn?.name ? fn.name : null;
    const argumentsDelta = fn?.arguments ?? "";
    if (id !== null) state.id = id;
    if (name !== null) state.name = name;
    state.arguments += argumentsDelta;
    if (id === null && name === null && argumentsDelta === "") return;
    this.#progress++;
    this.#pending.push({
      type: "tool-call-delta",
      index,
      id,
      name,
      arguments_delta: argumentsDelta,
    });
  }

  /** The index as sent; without one, a new id opens a new call and anything else continues the last. */
  #resolveIndex(call: ToolCallChunk): number {
    if (call.index !== null && call.index !== undefined) return call.index;
    if (call.id) {
      for (const [index, state] of this.#toolCalls) if (state.id === call.id) return index;
      return this.#toolCalls.size === 0 ? 0 : Math.max(...this.#toolCalls.keys()) + 1;
    }
    return this.#lastToolCallIndex ?? 0;
  }

  #errorEventMessage(value: unknown): string {
    const message = value === NOT_JSON ? null : endpointMessageFromValue(value, this.#apiKey);
    return `the model endpoint reported an error mid-stream${message ? `: ${message}` : ""}`;
  }

  #fail(failure: "error_event" | "malformed_json", message: string): void {
    this.#failure = new ProviderStreamError(failure, message);
  }
}

const NOT_JSON = Symbol("not JSON");
const OPENING_BRACE = 0x7b;
const BYTE_ORDER_MARK = 0xfeff;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** Decodes a whole byte stream at once: the pure path, for tests and recorded fixtures. */
export function decodeCompletionStream(
  chunks: Iterable<Uint8Array>,
  options: DecoderOptions = {},
): { parts: (DeltaPart | ToolCallPart)[]; summary: CompletionSummary } {
  const decoder = new CompletionStreamDecoder(options);
  const parts: (DeltaPart | ToolCallPart)[] = [];
  for (const bytes of chunks) {
    parts.push(...decoder.push(bytes));
    if (decoder.finished) break;
  }
  const summary = decoder.end();
  parts.push(...summary.deltas, ...summary.tool_calls);
  return { parts, summary };
}
