import { z } from "zod";
import type { ToolInvocationMode } from "./session-config.js";

const tokenCount = z.number().int().nonnegative().default(0);
const milliseconds = z.number().finite().nonnegative();

/**
 * Token counts of one call, normalized so that prompt + completion = total always holds.
 * `cached_tokens` is the part of the prompt read from a cache, `cache_write_tokens` the part
 * written to one (billed above the input price by some providers); `reasoning_tokens` is the part
 * of the completion spent thinking, so it is *inside* `completion_tokens`, never beside it.
 */
export const TokenUsage = z.strictObject({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount,
  cached_tokens: tokenCount,
  reasoning_tokens: tokenCount,
  cache_write_tokens: tokenCount,
});
export type TokenUsage = z.output<typeof TokenUsage>;
export type TokenUsageInput = z.input<typeof TokenUsage>;

/** A TokenUsage from the counts at hand; absent counts are 0, total is prompt + completion. */
export function tokenUsage(counts: Partial<TokenUsage> = {}): TokenUsage {
  const prompt_tokens = counts.prompt_tokens ?? 0;
  const completion_tokens = counts.completion_tokens ?? 0;
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: counts.total_tokens ?? prompt_tokens + completion_tokens,
    cached_tokens: counts.cached_tokens ?? 0,
    reasoning_tokens: counts.reasoning_tokens ?? 0,
    cache_write_tokens: counts.cache_write_tokens ?? 0,
  };
}

/**
 * Where a call's token counts come from: the endpoint's `usage` object, the lab's own tokenizer
 * (no usage reported, or the call was cut short), or a server's timing report (llama.cpp's
 * `timings` when it sent no usage).
 */
export const UsageSource = z.enum(["endpoint", "estimated", "provider_timings"]);
export type UsageSource = z.infer<typeof UsageSource>;

/** What the endpoint said about the response itself: routers answer with another model. */
export interface ResponseIdentity {
  response_model: string | null;
  response_id: string | null;
  system_fingerprint: string | null;
}

export const AgentRole = z.enum(["chat_agent", "event_agent", "event_kernel"]);
export type AgentRole = z.infer<typeof AgentRole>;

export const CallKind = z.enum(["chat_completion", "argument_fallback", "tool_execution"]);
export type CallKind = z.infer<typeof CallKind>;

/** What kind of call a usage row measures. Defaults describe a plain chat completion, as in the seed. */
export const UsageMetadata = z.strictObject({
  agent: AgentRole.default("chat_agent"),
  call_kind: CallKind.default("chat_completion"),
  event_id: z.string().min(1).nullable().default(null),
  event_name: z.string().min(1).nullable().default(null),
  used_fallback: z.boolean().default(false),
  tool_latency_ms: milliseconds.nullable().default(null),
  metric_key: z.string().min(1).nullable().default(null),
  /**
   * The token counts are the lab's own count, not the endpoint's: an endpoint that reported none,
   * or a call cut short (cancelled, failed mid-stream) whose usage never arrived.
   */
  estimated: z.boolean().default(false),
  /** Default: `estimated` when `estimated`, else `endpoint`. `estimated` follows it when given. */
  usage_source: UsageSource.nullable().default(null),
  /** The price the provider reported for the call (OpenRouter's `usage.cost`), in USD. */
  cost_usd: z.number().finite().nonnegative().nullable().default(null),
  /** The lab's price-table cost of the call's tokens, in USD; null when the model is not priced. */
  cost_estimated_usd: z.number().finite().nonnegative().nullable().default(null),
  response_model: z.string().max(500).nullable().default(null),
  response_id: z.string().max(500).nullable().default(null),
  system_fingerprint: z.string().max(500).nullable().default(null),
  finish_reason: z.string().max(100).nullable().default(null),
  /** The model refused (a `refusal` delta), rather than answering. */
  refusal: z.boolean().default(false),
  /** The provider's usage object exactly as it arrived (and llama.cpp's `timings`), for audit. */
  raw_usage: z.record(z.string(), z.unknown()).nullable().default(null),
});
export type UsageMetadata = z.output<typeof UsageMetadata>;
export type UsageMetadataInput = z.input<typeof UsageMetadata>;

/** One measured call as `usageSummary` returns it: exactly the seed's keys. */
export interface UsageCallRecord {
  id: number;
  turn_index: number;
  round_index: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  ttft_ms: number | null;
  elapsed_ms: number;
  mode: ToolInvocationMode;
  agent: AgentRole;
  call_kind: CallKind;
  event_id: string | null;
  event_name: string | null;
  used_fallback: boolean;
  tool_latency_ms: number | null;
  metric_key: string | null;
  estimated: boolean;
  /** Added in schema v3; rows written before read reasoning/cache writes 0 and the rest null. */
  reasoning_tokens: number;
  cache_write_tokens: number;
  usage_source: UsageSource;
  cost_usd: number | null;
  cost_estimated_usd: number | null;
  response_model: string | null;
  response_id: string | null;
  system_fingerprint: string | null;
  finish_reason: string | null;
  refusal: boolean;
  raw_usage: Record<string, unknown> | null;
  created_at: string;
}

/** A call's cost as shown: the provider's figure when it reported one, else the price table's. */
export function callCost(call: Pick<UsageCallRecord, "cost_usd" | "cost_estimated_usd">): {
  usd: number | null;
  source: "reported" | "estimated" | null;
} {
  if (call.cost_usd !== null) return { usd: call.cost_usd, source: "reported" };
  if (call.cost_estimated_usd !== null)
    return { usd: call.cost_estimated_usd, source: "estimated" };
  return { usd: null, source: null };
}

/** Sums over a set of calls; `turn_wall_time_ms` is measured, so it is smaller when work overlapped. */
export interface UsageRollup {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cache_write_tokens: number;
  elapsed_ms: number;
  call_count: number;
  fallback_count: number;
  tool_count: number;
  /** How many of the calls have estimated token counts: a figure that includes them is an estimate. */
  estimated_count: number;
  /**
   * Sum of each call's `callCost` (the provider's figure where reported, else the price table's);
   * null when no call has a cost. Calls without one are counted in `unpriced_count`.
   */
  cost_usd: number | null;
  /** Calls whose cost the provider reported (the rest of the priced ones are table estimates). */
  reported_cost_count: number;
  /** Model calls with no cost at all (unknown price, none reported); tool executions are free. */
  unpriced_count: number;
  turn_wall_time_ms: number | null;
}

export interface TurnUsageRollup extends UsageRollup {
  turn_index: number;
}

export interface UsageSummary {
  calls: UsageCallRecord[];
  turns: TurnUsageRollup[];
  session: UsageRollup;
}

export function emptyUsageRollup(): UsageRollup {
  return {
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    cache_write_tokens: 0,
    elapsed_ms: 0,
    call_count: 0,
    fallback_count: 0,
    tool_count: 0,
    estimated_count: 0,
    cost_usd: null,
    reported_cost_count: 0,
    unpriced_count: 0,
    turn_wall_time_ms: null,
  };
}

/** One turn's rollup, zero when the turn made no calls. */
export function turnRollup(
  rollups: Pick<UsageSummary, "turns">,
  turnIndex: number,
): TurnUsageRollup {
  return (
    rollups.turns.find((turn) => turn.turn_index === turnIndex) ?? {
      turn_index: turnIndex,
      ...emptyUsageRollup(),
    }
  );
}

/**
 * A sum of call times as the calls are recorded, to the hundredth of a millisecond: adding
 * floating-point figures leaves noise in the last digits (15.309999999999999 for 15.31).
 */
export function sumOfMilliseconds(value: number): number {
  return Math.round(value * 100) / 100;
}
