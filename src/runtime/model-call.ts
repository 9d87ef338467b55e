import { OutputLimitError } from "../domain/errors.js";
import { cutMarker } from "../domain/limits.js";
import { redactSecretText } from "../domain/secrets.js";
import type { AgentRole, CallKind, TokenUsage } from "../domain/usage.js";
import type { ChatModel, ChatModelRequest } from "../providers/chat-model.js";
import { type CutCallProgress, estimateCutUsage } from "./cut-call-usage.js";
import { elapsedSince } from "./elapsed.js";
import type { TurnContext } from "./turn-context.js";

export interface AssembledToolCall {
  index: number;
  id: string;
  name: string;
  raw_arguments: string;
}

export interface ModelCallResult {
  text: string;
  tool_calls: AssembledToolCall[];
  finish_reason: string;
  usage: TokenUsage;
}

export interface ModelCallSpec {
  model: ChatModel;
  request: ChatModelRequest;
  agent: AgentRole;
  call_kind: CallKind;
  round_index: number;
  metric_key: string;
  event?: { id: string; name: string };
  /** Each text delta as it streams (the dual_agent parser listens here). */
  onText?: (text: string) => void;
}

/**
 * One measured model call: streams it, reports retries, and records it as one usage row with the
 * port's TTFT and elapsed time, plus request and response audit entries. A stream that fails or
 * is cancelled throws (its typed provider error after an audit entry); when output had streamed by
 * then, the call is still recorded, with token counts estimated from the prompt and that output.
 */
export async function callModel(
  context: TurnContext,
  spec: ModelCallSpec,
): Promise<ModelCallResult> {
  const { model, request, agent, round_index } = spec;
  const prefix = agent === "chat_agent" ? "chat_agent" : "event_agent";
  await context.audit(
    `${prefix}_request`,
    {
      model: `${model.provider}:${model.model}`,
      simulated: model.simulated,
      messages: request.messages.length,
      tools: (request.tools ?? []).map((tool) => tool.name),
      ...(request.response_format ? { response_format: request.response_format.type } : {}),
      ...(spec.event ? { event_id: spec.event.id, event_name: spec.event.name } : {}),
    },
    round_index,
  );
  let text = "";
  const toolCalls: AssembledToolCall[] = [];
  let pendingUsage: { usage: TokenUsage; estimated: boolean } | null = null;
  const startedAt = performance.now();
  let ttftMs: number | null = null;
  /** Raw arguments by tool call index, as far as they streamed. */
  const toolArguments = new Map<number, string>();
  const maxOutput = context.config.limits.max_output_chars;
  /** Room left under the output limit: text and tool arguments share it. */
  let room = maxOutput;
  // Stopping this call at the limit must not cancel the turn, hence its own signal.
  const call = new AbortController();
  const stopCall = () => call.abort(context.signal.reason);
  if (context.signal.aborted) stopCall();
  context.signal.addEventListener("abort", stopCall, { once: true });
  const overLimit = () => {
    const error = new OutputLimitError(maxOutput);
    call.abort(error);
    const marker = cutMarker("model output", maxOutput);
    text += marker;
    spec.onText?.(marker);
    return error;
  };
  try {
    for await (const part of model.stream(request, { signal: call.signal })) {
      switch (part.type) {
        case "first-token":
          ttftMs = part.ttft_ms;
          break;
        case "text-delta": {
          ttftMs ??= elapsedSince(startedAt);
          const kept = part.text.slice(0, room);
          room -= kept.length;
          text += kept;
          if (kept) spec.onText?.(kept);
          if (kept.length < part.text.length) throw overLimit();
          break;
        }
        case "tool-call-delta": {
          ttftMs ??= elapsedSince(startedAt);
          const kept = part.arguments_delta.slice(0, room);
          room -= kept.length;
          toolArguments.set(part.index, (toolArguments.get(part.index) ?? "") + kept);
          if (kept.length < part.arguments_delta.length) throw overLimit();
          break;
        }
        case "tool-call": {
          ttftMs ??= elapsedSince(startedAt);
          const streamed = toolArguments.get(part.index)?.length ?? 0;
          const extra = Math.max(0, part.raw_arguments.length - streamed);
          if (extra > room) throw overLimit();
          room -= extra;
          toolArguments.set(part.index, part.raw_arguments);
          toolCalls.push(part);
          break;
        }
        case "retry": {
          const retry = { ...withoutType(part), reason: redactSecretText(part.reason) };
          context.emit({ type: "retry", round_index, agent, ...retry });
          await context.audit("provider_retry", { agent, ...retry }, round_index);
          break;
        }
        case "usage":
          if (part.estimated) {
            await context.audit(
              "usage_estimated",
              {
                agent,
                reason:
                  "the counts are the lab's estimate (the endpoint reported none, or a text was past the tokenizer's exact limit)",
              },
              round_index,
            );
          }
          pendingUsage = part;
          break;
        case "finish": {
          const usage = pendingUsage?.usage ?? {
            prompt_tokens: 0,
            completion_tokens: 0,
            total_tokens: 0,
            cached_tokens: 0,
          };
          await recordUsage(context, spec, {
            usage,
            estimated: pendingUsage?.estimated ?? true,
            ttft_ms: part.ttft_ms,
            elapsed_ms: part.elapsed_ms,
          });
          await context.audit(
            `${prefix}_response`,
            {
              finish_reason: part.finish_reason,
              ttft_ms: part.ttft_ms,
              elapsed_ms: part.elapsed_ms,
              attempts: part.attempts,
              usage,
              tool_calls: toolCalls.map((call) => call.name),
            },
            round_index,
          );
          return { text, tool_calls: toolCalls, finish_reason: part.finish_reason, usage };
        }
        default:
          break;
      }
    }
  } catch (error) {
    call.abort(error);
    if (text !== "" || toolArguments.size > 0) {
      const progress: CutCallProgress = {
        text,
        tool_arguments: [...toolArguments.values()],
        started_at: startedAt,
        first_output_at: ttftMs,
      };
      // The cut is what the caller must see; a store that fails here fails the turn's next write.
      await recordCutCall(
        context,
        spec,
        progress,
        context.signal.aborted ? "cancelled" : "failed",
      ).catch(() => {});
    }
    if (!context.signal.aborted) {
      await context.audit(
        `${prefix}_error`,
        {
          code: (error as { code?: string }).code ?? "unknown",
          message: error instanceof Error ? error.message : String(error),
        },
        round_index,
      );
    }
    throw error;
  } finally {
    context.signal.removeEventListener("abort", stopCall);
  }
  // The port promises a `finish` part; a model that ends without one has failed.
  throw new Error(`${model.provider}:${model.model} ended its stream without a finish part`);
}

/**
 * The usage row of a call cut short after output had streamed: the tokens were spent (and billed)
 * even though the endpoint's usage never arrived, so a turn that streamed text never reads 0
 * calls. Same metric key as a finished call; `estimated` says where the counts come from.
 */
async function recordCutCall(
  context: TurnContext,
  spec: ModelCallSpec,
  progress: CutCallProgress,
  reason: "cancelled" | "failed",
): Promise<void> {
  await recordUsage(context, spec, {
    usage: estimateCutUsage(spec.request, progress),
    estimated: true,
    ttft_ms: progress.first_output_at,
    elapsed_ms: elapsedSince(progress.started_at),
  });
  await context.audit(
    "usage_estimated",
    {
      agent: spec.agent,
      metric_key: spec.metric_key,
      reason: `the call was ${reason} before the endpoint reported usage; counted with the o200k_base tokenizer from the prompt and the ${progress.text.length} characters that streamed`,
    },
    spec.round_index,
  );
}

/** One call's usage row, and the same counts as a `usage` event for the live view. */
async function recordUsage(
  context: TurnContext,
  spec: ModelCallSpec,
  measured: { usage: TokenUsage; estimated: boolean; ttft_ms: number | null; elapsed_ms: number },
): Promise<void> {
  const { agent, round_index } = spec;
  const { usage, estimated, ttft_ms, elapsed_ms } = measured;
  await context.store.appendUsage(context.session_id, {
    turn_index: context.turn_index,
    round_index,
    usage,
    ttft_ms,
    elapsed_ms,
    metadata: {
      agent,
      call_kind: spec.call_kind,
      event_id: spec.event?.id ?? null,
      event_name: spec.event?.name ?? null,
      used_fallback: spec.call_kind === "argument_fallback",
      metric_key: spec.metric_key,
      estimated,
    },
  });
  context.emit({
    type: "usage",
    round_index,
    agent,
    call_kind: spec.call_kind,
    metric_key: spec.metric_key,
    usage,
    estimated,
    ttft_ms,
    elapsed_ms,
  });
}

function withoutType<Part extends { type: string }>(part: Part): Omit<Part, "type"> {
  const { type: _type, ...rest } = part;
  return rest;
}
