import { tableCost } from "../domain/call-pricing.js";
import { redactSecretText } from "../domain/secrets.js";
import {
  callCost,
  type ResponseIdentity,
  type TokenUsage,
  type UsageSource,
} from "../domain/usage.js";
import type { CaptureSink } from "./capture-sink.js";
import type { ModelCallSpec } from "./model-call.js";
import type { TurnContext } from "./turn-context.js";

/** Everything a call's usage row says about it, finished or cut. */
export interface MeasuredCall extends ResponseIdentity {
  usage: TokenUsage;
  source: UsageSource;
  /** What the provider reported the call cost, when it did. */
  cost_usd: number | null;
  raw_usage: Record<string, unknown> | null;
  finish_reason: string | null;
  refusal: boolean;
  ttft_ms: number | null;
  elapsed_ms: number;
}

/**
 * One call's usage row, the same figures as a `usage` event for the live view, then its captured
 * payload under the row's metric key. The price-table cost is taken as every face takes it
 * (call-pricing.ts): by the agent's configured model string, not the model that answered.
 * A store that refuses either write throws, as any write of the turn does (turn-failure.ts).
 */
export async function recordCall(
  context: TurnContext,
  spec: ModelCallSpec,
  measured: MeasuredCall,
  sink: CaptureSink | null,
): Promise<void> {
  const { agent, round_index, metric_key } = spec;
  const { usage, source, ttft_ms, elapsed_ms } = measured;
  const estimated = source === "estimated";
  const cost_estimated_usd = tableCost(usage, context.config, agent, context.config.prices);
  context.records.usage({
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
      tool_latency_ms: null,
      metric_key,
      estimated,
      usage_source: source,
      cost_usd: measured.cost_usd,
      cost_estimated_usd,
      response_model: measured.response_model,
      response_id: measured.response_id,
      system_fingerprint: measured.system_fingerprint,
      finish_reason: storableFinishReason(measured.finish_reason),
      refusal: measured.refusal,
      raw_usage: measured.raw_usage,
    },
  });
  const cost = callCost({ cost_usd: measured.cost_usd, cost_estimated_usd });
  context.emit({
    type: "usage",
    round_index,
    agent,
    call_kind: spec.call_kind,
    metric_key,
    usage,
    estimated,
    usage_source: source,
    cost_usd: cost.usd,
    cost_source: cost.source,
    response_model: measured.response_model,
    ttft_ms,
    elapsed_ms,
  });
  if (sink?.captured) {
    const bodies = sink.bodies();
    context.records.payload({
      metric_key,
      turn_index: context.turn_index,
      round_index,
      agent,
      ...bodies,
      // Redacted as written, as raw usage and the audit are: a reader later may not know the key
      // this process held, and an endpoint can echo it. (The sizes stay the wire's.) A response
      // with its bytes was found clean by the sink, piece by piece, against the same keys and
      // shapes: scanning its text again would first join it into one large string.
      request_body: redactSecretText(bodies.request_body),
      response_body:
        bodies.response_utf8 === undefined
          ? redactSecretText(bodies.response_body)
          : bodies.response_body,
    });
  }
}

/**
 * An endpoint's finish reason as the usage row keeps it: control characters out, at most 100
 * characters. Whatever a server sends there must not fail the call's record.
 */
function storableFinishReason(reason: string | null): string | null {
  if (reason === null) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = reason.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").slice(0, 100);
  return clean === "" ? null : clean;
}
