import { redactSecretText } from "../domain/secrets.js";
import type { AgentRole, CallKind, TokenUsage } from "../domain/usage.js";
import type { ChatModel, ChatModelRequest } from "../providers/chat-model.js";
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
 * port's TTFT and elapsed time, plus request and response audit entries. A stream that fails
 * throws its typed provider error after an audit entry; nothing is recorded as a usage row then.
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
  try {
    for await (const part of model.stream(request, { signal: context.signal })) {
      switch (part.type) {
        case "text-delta":
          text += part.text;
          spec.onText?.(part.text);
          break;
        case "tool-call":
          toolCalls.push(part);
          break;
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
          await context.store.appendUsage(context.session_id, {
            turn_index: context.turn_index,
            round_index,
            usage,
            ttft_ms: part.ttft_ms,
            elapsed_ms: part.elapsed_ms,
            metadata: {
              agent,
              call_kind: spec.call_kind,
              event_id: spec.event?.id ?? null,
              event_name: spec.event?.name ?? null,
              used_fallback: spec.call_kind === "argument_fallback",
              metric_key: spec.metric_key,
            },
          });
          context.emit({
            type: "usage",
            round_index,
            agent,
            call_kind: spec.call_kind,
            metric_key: spec.metric_key,
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
  }
  // The port promises a `finish` part; a model that ends without one has failed.
  throw new Error(`${model.provider}:${model.model} ended its stream without a finish part`);
}

function withoutType<Part extends { type: string }>(part: Part): Omit<Part, "type"> {
  const { type: _type, ...rest } = part;
  return rest;
}
