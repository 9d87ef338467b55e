import { z } from "zod";
import { ToolCallEvent } from "./events.js";
import { ToolInvocationMode } from "./session-config.js";
import { AgentRole, CallKind, TokenUsage, type TurnUsageRollup, UsageSource } from "./usage.js";

/**
 * What a running turn reports, in order, to whoever watches it (the CLI, the HTTP API's SSE, the
 * web UI). Data only, snake_case, JSON-safe: the same objects travel over the wire. The schema is
 * the one description: the TypeScript type is inferred from it and the OpenAPI document renders it
 * (src/server/openapi.ts). The runtime does not parse its own events (they are built typed, and a
 * parse per text delta would cost the hot path); clients and tests may.
 */

export const TurnStatus = z.enum(["completed", "cancelled", "failed", "max_rounds"]);
export type TurnStatus = z.infer<typeof TurnStatus>;

const index = z.number().int().nonnegative();
const count = z.number().int().nonnegative();
const milliseconds = z.number().nonnegative();
const JsonObject = z.record(z.string(), z.unknown());

const TurnUsageRollupShape = z.strictObject({
  turn_index: index,
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  cached_tokens: count,
  reasoning_tokens: count,
  cache_write_tokens: count,
  elapsed_ms: milliseconds,
  call_count: count,
  fallback_count: count,
  tool_count: count,
  estimated_count: count,
  cost_usd: z
    .number()
    .nonnegative()
    .nullable()
    .describe("the calls' costs summed (provider-reported where given, else the price table's)"),
  reported_cost_count: count,
  unpriced_count: count,
  turn_wall_time_ms: milliseconds.nullable(),
});

/** A round's delta of one kind of streamed text. */
const delta = <Type extends string>(type: Type) =>
  z.strictObject({ type: z.literal(type), round_index: index, text: z.string() });

export const TurnEvent = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("turn_start"),
    session_id: z.string(),
    turn_index: index,
    mode: ToolInvocationMode,
    simulated: z.boolean(),
  }),
  z.strictObject({ type: z.literal("round_start"), round_index: index }),
  delta("text_delta"),
  delta("reasoning_delta").describe(
    "the chat agent's thinking, streamed; the answer's text never contains it",
  ),
  delta("refusal_delta"),
  z.strictObject({
    type: z.literal("retry"),
    round_index: index,
    agent: AgentRole,
    attempt: z.number().int().positive(),
    status: z.number().int().nullable(),
    reason: z.string(),
    delay_ms: milliseconds,
  }),
  z
    .strictObject({ type: z.literal("tool_call"), round_index: index, event: ToolCallEvent })
    .describe("a tool call the chat agent asked for, as it asked (arguments may still be invalid)"),
  z.strictObject({
    type: z.literal("fallback_start"),
    round_index: index,
    event_id: z.string(),
    event_name: z.string(),
    reason: z.string(),
  }),
  z.strictObject({
    type: z.literal("fallback_end"),
    round_index: index,
    event_id: z.string(),
    ok: z.boolean(),
    event: ToolCallEvent.nullable(),
    error: z.string().nullable(),
  }),
  z
    .strictObject({
      type: z.literal("approval_required"),
      round_index: index,
      event_id: z.string(),
      event_name: z.string(),
      arguments: JsonObject,
      timeout_ms: milliseconds,
    })
    .describe("a call to a tool that requires approval waits for a decision before it runs"),
  z.strictObject({
    type: z.literal("approval_decided"),
    round_index: index,
    event_id: z.string(),
    event_name: z.string(),
    decision: z.enum(["approve", "deny"]),
    decided_by: z.enum(["user", "policy", "timeout"]),
    reason: z.string().nullable(),
    /** The edited arguments, when the approver changed them. */
    arguments: JsonObject.nullable(),
    /** Time spent waiting, kept apart from the tool's latency and the turn's wall time. */
    wait_ms: milliseconds,
  }),
  z.strictObject({
    type: z.literal("tool_result"),
    round_index: index,
    event_id: z.string(),
    event_name: z.string(),
    ok: z.boolean(),
    /** What goes back to the model (JSON text). */
    content: z.string(),
    latency_ms: milliseconds,
    used_fallback: z.boolean(),
  }),
  z.strictObject({
    type: z.literal("usage"),
    round_index: index,
    agent: AgentRole,
    call_kind: CallKind,
    metric_key: z.string(),
    usage: TokenUsage,
    estimated: z.boolean(),
    usage_source: UsageSource,
    /** The call's cost as `callCost` gives it, and whether the provider reported it. */
    cost_usd: z.number().nonnegative().nullable(),
    cost_source: z
      .enum(["reported", "estimated"])
      .nullable()
      .describe("reported: the provider's own figure; estimated: the lab's price table"),
    response_model: z.string().nullable(),
    ttft_ms: milliseconds.nullable(),
    elapsed_ms: milliseconds,
  }),
  z.strictObject({
    type: z.literal("round_end"),
    round_index: index,
    finish_reason: z.string().nullable(),
    tool_calls: count,
  }),
  z
    .strictObject({
      type: z.literal("error"),
      code: z.string(),
      message: z.string(),
      /**
       * The database's own code for a storage_failed error (a PostgreSQL SQLSTATE, SQLite's
       * SQLITE_FULL…), the one the message ends with in parentheses. Absent otherwise.
       */
      storage_code: z.string().optional(),
      /**
       * The lab's database went away (a lost connection, a server shutting down), rather than
       * refusing the write: the same turn may run once it answers again. Absent otherwise.
       */
      database_away: z.literal(true).optional(),
    })
    .describe("the turn failed: a lab error code or internal_error (clients accept new codes)"),
  z.strictObject({
    type: z.literal("turn_end"),
    session_id: z.string(),
    turn_index: index,
    status: TurnStatus,
    /** The user-visible text of the final round (tags removed). */
    answer: z.string(),
    wall_time_ms: milliseconds,
    usage: TurnUsageRollupShape,
  }),
]);
export type TurnEvent = z.output<typeof TurnEvent>;
export type TurnEventType = TurnEvent["type"];

/** Every event type, in the schema's order (for exhaustive tests and clients). */
export const TURN_EVENT_TYPES: readonly TurnEventType[] = TurnEvent.options.map(
  (option) => option.shape.type.value,
);

// The rollup a turn_end carries is the store's TurnUsageRollup, field for field, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const rollupAgrees: Same<z.output<typeof TurnUsageRollupShape>, TurnUsageRollup> = true;
void rollupAgrees;
