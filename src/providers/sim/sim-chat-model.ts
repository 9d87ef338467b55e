import { abortableSleep } from "../../domain/abortable-sleep.js";
import { tokenUsage } from "../../domain/usage.js";
import type { ChatModel, ChatModelPart, ChatModelRequest, StreamOptions } from "../chat-model.js";
import { PartStream } from "../part-stream.js";
import { countTokens, isEstimatedText, loadTokenizer, truncateToTokens } from "../tokenizer.js";
import { ConversationWalks } from "./conversation-walk.js";
import { reasoningFor } from "./reasoning.js";
import { type PlannedToolCall, planReply, type ReplyPlan } from "./reply-plan.js";
import { RequestDigests } from "./request-digests.js";
import { hashString, SeededRandom } from "./seeded-random.js";
import {
  parseSimModelSettings,
  type SimModelSettingsInput,
  type SimOptions,
} from "./sim-options.js";
import { argumentPieces, textPieces } from "./stream-pieces.js";
import { SimWireCapture } from "./wire-capture.js";

/**
 * Whether a part is due later. With no latency set nothing is, and the stream goes on without
 * giving up its turn: the parts come as from one decoded buffer, and all of the sim's work runs
 * inside the caller's `next()` (the benchmarks time the model by that). An aborted call still
 * throws at once, as the sleep would.
 */
function mustWait(ms: number, signal: AbortSignal | undefined): boolean {
  if (ms > 0) return true;
  signal?.throwIfAborted();
  return false;
}

/**
 * The lab's embedded, deterministic simulated model. It needs no network: it reads the user's
 * intents, calls the built-in tools natively or with `<event>` tags, answers from tool results,
 * and streams with configurable timing. Its usage is counted exactly with the tokenizer. Its
 * cached tokens are a pure function of the request (see `cachedPromptTokens`): the prefix the
 * conversation's previous request must have sent, so they do not depend on which instance, face
 * or process served the turns. With option `reasoning` it thinks aloud first (reasoning deltas,
 * counted as reasoning tokens). Asked to capture, it hands over the request body and the SSE
 * stream an OpenAI-compatible endpoint would have exchanged for the same call.
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

  /** @throws InvalidInputError naming every bad field of `settings`. */
  constructor(settings: SimModelSettingsInput = {}) {
    const parsed = parseSimModelSettings(settings);
    this.model = parsed.name === undefined ? "sim" : `sim:${parsed.name}`;
    this.options = parsed.options;
    // The sim counts every prompt: its first call's TTFT must not include loading the encoder.
    loadTokenizer();
  }

  stream(request: ChatModelRequest, options: StreamOptions = {}): PartStream<ChatModelPart> {
    return new PartStream(this.#batches(request, options));
  }

  /**
   * The call's parts in batches: the parts due at once go out together, as an adapter hands on
   * the parts of one body read, and whatever is gathered goes out before each wait.
   */
  async *#batches(
    request: ChatModelRequest,
    options: StreamOptions,
  ): AsyncGenerator<readonly ChatModelPart[], void, undefined> {
    const { signal } = options;
    const startedAt = performance.now();
    const since = () => Math.round((performance.now() - startedAt) * 100) / 100;
    signal?.throwIfAborted();

    const toolsAndFormat = renderToolsAndFormat(request);
    const prompt = WALKS.figures(request.conversation_id, request.messages, toolsAndFormat);
    const requestDigest = DIGESTS.digest(
      request.conversation_id,
      fingerprint(request, prompt.json_parts),
    );
    const responseId = `chatcmpl-sim-${requestDigest.slice(0, 16)}`;
    const wire = options.capture
      ? new SimWireCapture(options.capture, this.model, responseId, request)
      : null;
    const plan = limitLength(
      stopAt(planReply(request, this.options, requestDigest), request.stop),
      request.max_tokens,
    );
    const reasoning = this.options.reasoning ? reasoningFor(plan) : "";
    const reasoningTokens = countTokens(reasoning);
    const completionTokens =
      reasoningTokens +
      countTokens(plan.text) +
      plan.tool_calls.reduce((sum, call) => sum + countTokens(renderCall(call)), 0);
    // Past the tokenizer's exact limit a count is the byte estimate, and the usage says so.
    const estimated =
      prompt.estimated ||
      isEstimatedText(plan.text) ||
      plan.tool_calls.some((call) => isEstimatedText(renderCall(call)));
    const random = new SeededRandom(hashString(requestDigest, this.options.seed ^ 0x2545f491));
    const deltas: ChatModelPart[] = [
      ...textPieces(plan.text, random).map((text): ChatModelPart => ({ type: "text-delta", text })),
      ...plan.tool_calls.flatMap((call, index) => toolCallDeltas(call, index, random)),
    ];
    if (reasoning) {
      // Its own generator: turning reasoning on leaves the answer's deltas as they were.
      const thinking = new SeededRandom(
        hashString(`${requestDigest}:reasoning`, this.options.seed),
      );
      deltas.unshift(
        ...textPieces(reasoning, thinking).map(
          (text): ChatModelPart => ({ type: "reasoning-delta", text }),
        ),
      );
    }

    let batch: ChatModelPart[] = [
      { type: "response-start", attempt: 1, status: 200, request_id: null, at_ms: since() },
    ];
    /** The parts gathered so far, handed out (the batch starts anew). */
    const gathered = () => {
      const out = batch;
      batch = [];
      return out;
    };
    wire?.start();
    if (mustWait(this.options.first_token_ms, signal)) {
      yield gathered();
      await abortableSleep(this.options.first_token_ms, signal);
    }
    let ttftMs: number | null = null;
    if (deltas.length > 0) {
      ttftMs = since();
      batch.push({ type: "first-token", ttft_ms: ttftMs });
    }
    const firstTokenAt = performance.now();
    const { tokens_per_second: rate } = this.options;
    const durationMs = rate > 0 ? (completionTokens / rate) * 1000 : 0;
    for (const [index, delta] of deltas.entries()) {
      const dueAt = firstTokenAt + (durationMs * index) / deltas.length;
      const wait = dueAt - performance.now();
      if (mustWait(wait, signal)) {
        if (batch.length > 0) yield gathered();
        await abortableSleep(wait, signal);
      }
      wire?.delta(delta);
      batch.push(delta);
    }
    const rest = firstTokenAt + durationMs - performance.now();
    if (mustWait(rest, signal)) {
      if (batch.length > 0) yield gathered();
      await abortableSleep(rest, signal);
    }
    for (const [index, call] of plan.tool_calls.entries()) {
      batch.push({ type: "tool-call", index, ...call });
    }
    signal?.throwIfAborted();
    const usage = tokenUsage({
      prompt_tokens: prompt.prompt_tokens,
      completion_tokens: completionTokens,
      cached_tokens: prompt.cached_tokens,
      reasoning_tokens: reasoningTokens,
    });
    wire?.end(plan.finish_reason, usage);
    batch.push({
      type: "usage",
      usage,
      estimated,
      source: estimated ? "estimated" : "endpoint",
      cost_usd: null,
      raw: null,
    });
    batch.push({
      type: "finish",
      finish_reason: plan.finish_reason,
      ttft_ms: ttftMs,
      elapsed_ms: since(),
      attempts: 1,
      response_model: this.model,
      response_id: responseId,
      system_fingerprint: null,
    });
    yield batch;
  }
}

/**
 * Each conversation's last request's hash states, for every sim of the process: a call hashes
 * only what is new since the conversation's last one.
 */
const DIGESTS = new RequestDigests();

/** Each conversation's running prompt figures, for every sim of the process (as DIGESTS). */
const WALKS = new ConversationWalks();

/** Everything that decides the reply; equal fingerprints give equal replies. */
function fingerprint(request: ChatModelRequest, messagesJson: readonly string[]): string[] {
  // JSON.stringify([messages, tools, …]) in parts, the history's from the per-message cache.
  const rest = JSON.stringify([
    request.tools ?? null,
    request.tool_choice ?? null,
    request.response_format ?? null,
    request.max_tokens ?? null,
    // Only when given: every reply of a request without one stays as it was.
    ...(request.stop === undefined ? [] : [request.stop]),
  ]);
  return ["[", ...messagesJson, ",", rest.slice(1)];
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

/**
 * Honours `stop` for prose as an endpoint does: the text ends where the first stop sequence would
 * begin, which is not sent, and the finish reason is "stop". Tool calls are never cut.
 */
function stopAt(plan: ReplyPlan, stop: readonly string[] | undefined): ReplyPlan {
  if (stop === undefined || plan.tool_calls.length > 0) return plan;
  let end = -1;
  for (const sequence of stop) {
    const at = plan.text.indexOf(sequence);
    if (at !== -1 && (end === -1 || at < end)) end = at;
  }
  return end === -1 ? plan : { ...plan, text: plan.text.slice(0, end), finish_reason: "stop" };
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
