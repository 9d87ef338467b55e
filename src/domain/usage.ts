import { z } from "zod";
import type { ToolInvocationMode } from "./session-config.js";

const tokenCount = z.number().int().nonnegative().default(0);
const milliseconds = z.number().finite().nonnegative();

/** Token counts as an endpoint reports them; `cached_tokens` is the part of the prompt served from cache. */
export const TokenUsage = z.strictObject({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount,
  cached_tokens: tokenCount,
});
export type TokenUsage = z.output<typeof TokenUsage>;
export type TokenUsageInput = z.input<typeof TokenUsage>;

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
  created_at: string;
}

/** Sums over a set of calls; `turn_wall_time_ms` is measured, so it is smaller when work overlapped. */
export interface UsageRollup {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  elapsed_ms: number;
  call_count: number;
  fallback_count: number;
  tool_count: number;
  /** How many of the calls have estimated token counts: a figure that includes them is an estimate. */
  estimated_count: number;
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
    elapsed_ms: 0,
    call_count: 0,
    fallback_count: 0,
    tool_count: 0,
    estimated_count: 0,
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
