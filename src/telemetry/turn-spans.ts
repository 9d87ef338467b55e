import {
  type Attributes,
  type Context,
  context,
  type HrTime,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { callCost } from "../domain/usage.js";
import type { PlacedCall } from "./call-timeline.js";
import {
  chatContents,
  systemInstructions,
  toolContents,
  turnContents,
} from "./message-contents.js";
import { modelName, type TurnTrace } from "./turn-trace.js";

/**
 * A turn's spans in the OpenTelemetry GenAI semantic conventions (semconv 1.37+, as
 * @opentelemetry/semantic-conventions 1.45 names them: `gen_ai.provider.name`,
 * `gen_ai.input.messages`): `invoke_agent agent-lab` for the turn, with a child `chat {model}` per
 * model call (the event agent's argument fallbacks marked `agent_lab.fallback`) and
 * `execute_tool {tool}` per tool execution. Times are the recorded ones (turn-trace.ts), given to
 * the SDK as start and end times, so a past session's spans carry its own times.
 */

export const AGENT_NAME = "agent-lab";

export interface SpanOptions {
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: message contents on the spans. */
  content: boolean;
}

/** Starts and ends the turn's spans on `tracer`; returns how many were made. */
export function emitTurnSpans(tracer: Tracer, turn: TurnTrace, options: SpanOptions): number {
  const chat = turn.chat_model;
  const calls = turn.calls;
  const tokens = sumTokens(calls);
  const root = tracer.startSpan(
    `invoke_agent ${AGENT_NAME}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: at(turn.start_ms),
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": chat.provider,
        "gen_ai.agent.name": AGENT_NAME,
        "gen_ai.request.model": chat.model,
        "gen_ai.conversation.id": turn.session_id,
        "gen_ai.usage.input_tokens": tokens.input,
        "gen_ai.usage.output_tokens": tokens.output,
        "agent_lab.mode": turn.mode,
        "agent_lab.turn_index": turn.turn_index,
        "agent_lab.status": turn.status,
        "agent_lab.event_model": `${turn.event_model.provider}:${turn.event_model.model}`,
        ...(tokens.cost === null ? {} : { "agent_lab.cost_usd": tokens.cost }),
        ...contentAttributes(options.content ? turnContents(turn) : null),
      },
    },
    context.active(),
  );
  if (turn.error_type !== null) fail(root, turn.error_type);
  const parent = trace.setSpan(context.active(), root);
  for (const call of calls) {
    const child: ChildSpan = { tracer, parent, turn, call, options };
    const span = call.call_kind === "tool_execution" ? toolSpan(child) : chatSpan(child);
    if (call.error_type !== null) fail(span, call.error_type);
    span.end(at(call.end_ms));
  }
  root.end(at(turn.end_ms));
  return calls.length + 1;
}

/** What a call's span is made from: where it goes, under what, and the call. */
interface ChildSpan {
  tracer: Tracer;
  parent: Context;
  turn: TurnTrace;
  call: PlacedCall;
  options: SpanOptions;
}

function chatSpan({ tracer, parent, turn, call, options }: ChildSpan): Span {
  const fallback = call.call_kind === "argument_fallback";
  const configured = call.agent === "event_agent" ? turn.event_model : turn.chat_model;
  const model = call.model === null ? configured : modelName(call.model);
  const record = call.record;
  const cost = record === null ? null : callCost(record).usd;
  const contents =
    options.content && !fallback
      ? chatContents(turn, call.round_index, record?.finish_reason ?? null)
      : null;
  return tracer.startSpan(
    `chat ${model.model}`,
    {
      kind: SpanKind.CLIENT,
      startTime: at(call.start_ms),
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": model.provider,
        "gen_ai.request.model": model.model,
        "gen_ai.conversation.id": turn.session_id,
        ...(record?.response_model ? { "gen_ai.response.model": record.response_model } : {}),
        ...(record?.response_id ? { "gen_ai.response.id": record.response_id } : {}),
        ...(record?.finish_reason
          ? { "gen_ai.response.finish_reasons": [record.finish_reason] }
          : {}),
        ...(record === null
          ? {}
          : {
              "gen_ai.usage.input_tokens": record.prompt_tokens,
              "gen_ai.usage.output_tokens": record.completion_tokens,
              "gen_ai.usage.cache_read.input_tokens": record.cached_tokens,
              "gen_ai.usage.reasoning.output_tokens": record.reasoning_tokens,
              "agent_lab.cached_tokens": record.cached_tokens,
              "agent_lab.reasoning_tokens": record.reasoning_tokens,
              "agent_lab.estimated": record.estimated,
              ...(record.ttft_ms === null ? {} : { "agent_lab.ttft_ms": record.ttft_ms }),
              "agent_lab.elapsed_ms": record.elapsed_ms,
            }),
        ...(cost === null ? {} : { "agent_lab.cost_usd": cost }),
        ...(fallback && call.event_id !== null ? { "gen_ai.tool.call.id": call.event_id } : {}),
        ...(fallback && call.event_name !== null ? { "gen_ai.tool.name": call.event_name } : {}),
        ...common(turn, call),
        ...contentAttributes(contents),
        ...(contents === null ? {} : systemAttribute(turn)),
      },
    },
    parent,
  );
}

function toolSpan({ tracer, parent, turn, call, options }: ChildSpan): Span {
  const name = call.event_name ?? "unknown";
  const contents = options.content ? toolContents(turn, call.event_id) : null;
  return tracer.startSpan(
    `execute_tool ${name}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: at(call.start_ms),
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": turn.session_id,
        ...(call.event_id === null ? {} : { "gen_ai.tool.call.id": call.event_id }),
        ...(call.record === null ? {} : { "agent_lab.elapsed_ms": call.record.elapsed_ms }),
        ...common(turn, call),
        ...(contents?.arguments == null
          ? {}
          : { "gen_ai.tool.call.arguments": contents.arguments }),
        ...(contents?.result == null ? {} : { "gen_ai.tool.call.result": contents.result }),
      },
    },
    parent,
  );
}

function common(turn: TurnTrace, call: PlacedCall): Attributes {
  return {
    "agent_lab.mode": turn.mode,
    "agent_lab.agent": call.agent,
    "agent_lab.call_kind": call.call_kind,
    "agent_lab.metric_key": call.metric_key,
    "agent_lab.turn_index": turn.turn_index,
    "agent_lab.round_index": call.round_index,
    "agent_lab.fallback":
      call.call_kind === "argument_fallback" || (call.record?.used_fallback ?? false),
  };
}

function contentAttributes(contents: { input: string | null; output: string | null } | null) {
  if (contents === null) return {};
  return {
    ...(contents.input === null ? {} : { "gen_ai.input.messages": contents.input }),
    ...(contents.output === null ? {} : { "gen_ai.output.messages": contents.output }),
  };
}

function systemAttribute(turn: TurnTrace): Attributes {
  const instructions = systemInstructions(turn);
  return instructions === null ? {} : { "gen_ai.system_instructions": instructions };
}

/** error.type plus an error status; the message stays in the lab (it may quote an endpoint). */
function fail(span: Span, errorType: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}

/** Epoch milliseconds (with a fraction: durations are measured to the microsecond) as HrTime. */
function at(ms: number): HrTime {
  const whole = Math.floor(ms);
  const nanos = Math.round((ms - whole) * 1e6) + (whole % 1000) * 1e6;
  return [Math.floor(whole / 1000), Math.min(nanos, 999_999_999)];
}

function sumTokens(calls: readonly PlacedCall[]) {
  let input = 0;
  let output = 0;
  let cost: number | null = null;
  for (const call of calls) {
    if (call.record === null || call.call_kind === "tool_execution") continue;
    input += call.record.prompt_tokens;
    output += call.record.completion_tokens;
    const usd = callCost(call.record).usd;
    if (usd !== null) cost = (cost ?? 0) + usd;
  }
  return { input, output, cost };
}
