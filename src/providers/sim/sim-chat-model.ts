import { abortableSleep } from "../../domain/abortable-sleep.js";
import { tokenUsage } from "../../domain/usage.js";
import type { ChatModel, ChatModelPart, ChatModelRequest, StreamOptions } from "../chat-model.js";
import {
  countSegmentTokens,
  countTokens,
  isEstimatedPrompt,
  isEstimatedText,
  promptSegments,
  truncateToTokens,
} from "../tokenizer.js";
import { PrefixCache } from "./prefix-cache.js";
import { type PlannedToolCall, planReply, type ReplyPlan } from "./reply-plan.js";
import { digest, hashString, SeededRandom } from "./seeded-random.js";
import {
  parseSimModelSettings,
  type SimModelSettingsInput,
  type SimOptions,
} from "./sim-options.js";
import { argumentPieces, textPieces } from "./stream-pieces.js";

/**
 * The lab's embedded, deterministic simulated model. It needs no network: it reads the user's
 * intents, calls the built-in tools natively or with `<event>` tags, answers from tool results,
 * and streams with configurable timing. Its usage is counted exactly with the tokenizer, and its
 * cached tokens come from a per-conversation prefix cache kept by each instance.
 *
 *   new SimChatModel()                                         // model "sim", instant
 *   new SimChatModel({ name: "slow", options: { first_token_ms: 300, tokens_per_second: 50 } })
 */
export class SimChatModel implements ChatModel {
  readonly provider = "sim";
  readonly simulated = true;
  /** "sim", or "sim:NAME" when constructed with a name. */
  readonly model: string;
  /** The validated options, defaults filled in. */
  readonly options: SimOptions;
  readonly #cache = new PrefixCache();

  /** @throws InvalidInputError naming every bad field of `settings`. */
  constructor(settings: SimModelSettingsInput = {}) {
    const parsed = parseSimModelSettings(settings);
    this.model = parsed.name === undefined ? "sim" : `sim:${parsed.name}`;
    this.options = parsed.options;
  }

  stream(request: ChatModelRequest, options: StreamOptions = {}): AsyncIterable<ChatModelPart> {
    return this.#stream(request, options.signal);
  }

  async *#stream(
    request: ChatModelRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ChatModelPart> {
    const startedAt = performance.now();
    const since = () => Math.round((performance.now() - startedAt) * 100) / 100;
    signal?.throwIfAborted();

    const requestDigest = digest(fingerprint(request));
    const plan = limitLength(planReply(request, this.options, requestDigest), request.max_tokens);
    const toolsAndFormat = renderToolsAndFormat(request);
    const prompt = promptSegments(request.messages, toolsAndFormat);
    const promptTokenCount = countSegmentTokens(prompt);
    const cachedTokens = this.#cache.lookupAndStore(conversationKey(request), prompt);
    const completionTokens =
      countTokens(plan.text) +
      plan.tool_calls.reduce((sum, call) => sum + countTokens(renderCall(call)), 0);
    // Past the tokenizer's exact limit a count is the byte estimate, and the usage says so.
    const estimated =
      isEstimatedPrompt(request.messages, toolsAndFormat) ||
      isEstimatedText(plan.text) ||
      plan.tool_calls.some((call) => isEstimatedText(renderCall(call)));
    const random = new SeededRandom(hashString(requestDigest, this.options.seed ^ 0x2545f491));
    const deltas: ChatModelPart[] = [
      ...textPieces(plan.text, random).map((text): ChatModelPart => ({ type: "text-delta", text })),
      ...plan.tool_calls.flatMap((call, index) => toolCallDeltas(call, index, random)),
    ];

    yield { type: "response-start", attempt: 1, status: 200, request_id: null, at_ms: since() };
    await abortableSleep(this.options.first_token_ms, signal);
    let ttftMs: number | null = null;
    if (deltas.length > 0) {
      ttftMs = since();
      yield { type: "first-token", ttft_ms: ttftMs };
    }
    const firstTokenAt = performance.now();
    const { tokens_per_second: rate } = this.options;
    const durationMs = rate > 0 ? (completionTokens / rate) * 1000 : 0;
    for (const [index, delta] of deltas.entries()) {
      const dueAt = firstTokenAt + (durationMs * index) / deltas.length;
      await abortableSleep(dueAt - performance.now(), signal);
      yield delta;
    }
    await abortableSleep(firstTokenAt + durationMs - performance.now(), signal);
    for (const [index, call] of plan.tool_calls.entries()) {
      yield { type: "tool-call", index, ...call };
    }
    signal?.throwIfAborted();
    yield {
      type: "usage",
      usage: tokenUsage({
        prompt_tokens: promptTokenCount,
        completion_tokens: completionTokens,
        cached_tokens: cachedTokens,
      }),
      estimated,
      source: estimated ? "estimated" : "endpoint",
      cost_usd: null,
      raw: null,
    };
    yield {
      type: "finish",
      finish_reason: plan.finish_reason,
      ttft_ms: ttftMs,
      elapsed_ms: since(),
      attempts: 1,
      response_model: this.model,
      response_id: null,
      system_fingerprint: null,
    };
  }
}

/** Everything that decides the reply; equal fingerprints give equal replies. */
function fingerprint(request: ChatModelRequest): string {
  return JSON.stringify([
    request.messages,
    request.tools ?? null,
    request.tool_choice ?? null,
    request.response_format ?? null,
    request.max_tokens ?? null,
  ]);
}

/** The conversation a prefix cache groups by: the session id, else the first message. */
function conversationKey(request: ChatModelRequest): string {
  if (request.conversation_id !== undefined) return `id:${request.conversation_id}`;
  const first = request.messages[0];
  return first === undefined ? "empty" : `first:${digest(`${first.role}\n${first.content}`)}`;
}

/** The part of the prompt that is not messages: tool definitions and the response format. */
function renderToolsAndFormat(request: ChatModelRequest): string {
  const parts: string[] = [];
  if (request.tools !== undefined && request.tools.length > 0) {
    parts.push(JSON.stringify(request.tools));
  }
  if (request.response_format !== undefined) parts.push(JSON.stringify(request.response_format));
  return parts.join("\n");
}

/** Rendered as `promptTokens` renders a call in the history, so both count alike. */
function renderCall(call: PlannedToolCall): string {
  return `${call.name}(${call.raw_arguments})`;
}

function toolCallDeltas(
  call: PlannedToolCall,
  index: number,
  random: SeededRandom,
): ChatModelPart[] {
  return argumentPieces(call.raw_arguments, random).map((piece, position) => ({
    type: "tool-call-delta",
    index,
    id: position === 0 ? call.id : null,
    name: position === 0 ? call.name : null,
    arguments_delta: piece,
  }));
}

/** Honours `max_tokens` for prose (finish reason "length"); tool calls are never cut. */
function limitLength(plan: ReplyPlan, maxTokens: number | undefined): ReplyPlan {
  if (maxTokens === undefined || plan.tool_calls.length > 0) return plan;
  if (countTokens(plan.text) <= maxTokens) return plan;
  return {
    ...plan,
    text: truncateToTokens(plan.text, Math.max(0, maxTokens)),
    finish_reason: "length",
  };
}
