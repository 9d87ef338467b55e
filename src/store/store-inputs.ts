import { z } from "zod";
import { boundedRecord, WellFormedString } from "../domain/json-limits.js";
import { ChatMessage } from "../domain/messages.js";
import { SessionConfig } from "../domain/session-config.js";
import { SessionId } from "../domain/session-id.js";
import { AgentRole, TokenUsage, type TurnUsageRollup, UsageMetadata } from "../domain/usage.js";

/** Every store method validates its arguments with these, so each backend refuses the same input. */

export { SessionId };

const index = z.number().int().positive();
const milliseconds = z.number().finite().nonnegative();

export const CreateSessionOptions = z.strictObject({
  title: WellFormedString,
  config: SessionConfig.prefault({}),
  session_id: SessionId.optional(),
});
export type CreateSessionOptions = z.input<typeof CreateSessionOptions>;

export const EnsureSessionOptions = CreateSessionOptions.omit({ session_id: true });
export type EnsureSessionOptions = z.input<typeof EnsureSessionOptions>;

export const StartTurnOptions = z.strictObject({
  turn_index: index,
  user_message: WellFormedString,
  /** Who runs the turn ("pid@host"), so a later process can tell a live turn from a crashed one. */
  runner: z.string().min(1).nullable().default(null),
});
export type StartTurnOptions = z.input<typeof StartTurnOptions>;

/** A session as its runner last left it: what a claim may expect (ClaimTurnOptions.expected). */
export const ExpectedSession = z.strictObject({
  updated_at: z.string(),
  incarnation: z.number().int(),
});
export type ExpectedSession = z.output<typeof ExpectedSession>;

export const ClaimTurnOptions = z.strictObject({
  user_message: WellFormedString,
  /** Who runs the turn (see StartTurnOptions.runner); required: a claim must name its owner. */
  runner: z.string().min(1),
  /**
   * Whether the runner of a turn still marked running is alive; a dead one's turn is marked
   * interrupted. Default: every runner is alive, so a running turn always refuses the claim.
   */
  is_runner_alive: z
    .custom<(runner: string | null) => boolean>((value) => typeof value === "function", {
      message: "is_runner_alive must be a function",
    })
    .optional(),
  /**
   * The new turn's first audit row (its `turn_start`), written in the claim's transaction, so a
   * turn starts with one commit; stored as `appendAudit` stores it (repaired and redacted).
   */
  audit: z
    .strictObject({ event: z.string().min(1), details: boundedRecord().default({}) })
    .optional(),
  /**
   * The session as this runner last left it (its `updated_at` and `incarnation`, from its last
   * turn): the claim refuses with SessionChangedError, writing nothing, when the row differs. A
   * runner that kept the session's config and history can then skip reading the session first.
   */
  expected: ExpectedSession.optional(),
});
export type ClaimTurnOptions = z.input<typeof ClaimTurnOptions>;

export const FinishedTurnStatus = z.enum([
  "completed",
  "cancelled",
  "failed",
  "max_rounds",
  "interrupted",
]);
export type FinishedTurnStatus = z.infer<typeof FinishedTurnStatus>;

export const CompleteTurnOptions = z.strictObject({
  turn_index: index,
  wall_time_ms: milliseconds.nullable(),
  status: FinishedTurnStatus.default("completed"),
});
export type CompleteTurnOptions = z.input<typeof CompleteTurnOptions>;

export const AppendMessageOptions = z.strictObject({ turn_index: index, message: ChatMessage });
export type AppendMessageOptions = z.input<typeof AppendMessageOptions>;

export const AppendMessagesOptions = z.strictObject({
  turn_index: index,
  messages: z.array(ChatMessage).min(1, "a message group holds at least one message"),
});
export type AppendMessagesOptions = z.input<typeof AppendMessagesOptions>;

export const AppendAuditOptions = z.strictObject({
  event: z.string().min(1),
  details: boundedRecord().default({}),
  turn_index: index.nullable().default(null),
  round_index: index.nullable().default(null),
});
export type AppendAuditOptions = z.input<typeof AppendAuditOptions>;

/**
 * The accounting every stored model call keeps: prompt + completion = total, reasoning inside the
 * completion, cache reads and writes inside the prompt. The store refuses a call that breaks it
 * (the adapter normalizes a provider's odd counts and keeps its raw object); a tool execution
 * spends no tokens, so it is not checked. A count with only a total (prompt and completion 0) is
 * the seed's own shape (`TokenUsage(total_tokens=1)`) and stays accepted: it has no split to check.
 */
export function checkTokenAccounting(
  usage: TokenUsage,
  context: z.RefinementCtx,
  path: (string | number)[],
): void {
  const { prompt_tokens, completion_tokens, total_tokens } = usage;
  const split = prompt_tokens + completion_tokens;
  if (split > 0 && split !== total_tokens) {
    context.addIssue({
      code: "custom",
      path: [...path, "total_tokens"],
      message: `is ${total_tokens} but prompt_tokens + completion_tokens is ${split} (${prompt_tokens} + ${completion_tokens}); reasoning belongs inside completion_tokens`,
    });
  }
  if (usage.reasoning_tokens > completion_tokens) {
    context.addIssue({
      code: "custom",
      path: [...path, "reasoning_tokens"],
      message: `is ${usage.reasoning_tokens}, more than completion_tokens (${completion_tokens}); reasoning is part of the completion`,
    });
  }
  const cache = usage.cached_tokens + usage.cache_write_tokens;
  if (cache > prompt_tokens) {
    context.addIssue({
      code: "custom",
      path: [...path, usage.cache_write_tokens > 0 ? "cache_write_tokens" : "cached_tokens"],
      message: `cached_tokens + cache_write_tokens is ${cache} (${usage.cached_tokens} + ${usage.cache_write_tokens}), more than prompt_tokens (${prompt_tokens}); both are parts of the prompt`,
    });
  }
}

export const AppendUsageOptions = z
  .strictObject({
    turn_index: index,
    round_index: index,
    usage: TokenUsage,
    ttft_ms: milliseconds.nullable().default(null),
    elapsed_ms: milliseconds,
    metadata: UsageMetadata.prefault({}),
  })
  .superRefine((input, context) => {
    if (input.metadata.call_kind !== "tool_execution") {
      checkTokenAccounting(input.usage, context, ["usage"]);
    }
  })
  .transform((input) => {
    // One truth for where counts came from: a given usage_source wins, `estimated` follows it.
    const usage_source =
      input.metadata.usage_source ?? (input.metadata.estimated ? "estimated" : "endpoint");
    return {
      ...input,
      metadata: { ...input.metadata, usage_source, estimated: usage_source === "estimated" },
    };
  });
export type AppendUsageOptions = z.input<typeof AppendUsageOptions>;

export const AppendCallPayloadOptions = z.strictObject({
  metric_key: z.string().min(1),
  turn_index: index,
  round_index: index,
  agent: AgentRole,
  /** Already cut to the session's cap by the caller; the sizes and flags say what was cut. */
  request_body: z.string(),
  response_body: z.string(),
  /**
   * `response_body`'s UTF-8 encoding, when the caller has it (a captured stream's own bytes):
   * stored from these, so a large body's text is neither made whole nor encoded again. The
   * caller vouches that they are exactly that text (CaptureSink only gives bytes it checked).
   */
  response_utf8: z.custom<Uint8Array>((value) => value instanceof Uint8Array).optional(),
  request_bytes: z.number().int().nonnegative(),
  response_bytes: z.number().int().nonnegative(),
  request_truncated: z.boolean(),
  response_truncated: z.boolean(),
});
export type AppendCallPayloadOptions = z.input<typeof AppendCallPayloadOptions>;

/**
 * What one round of a turn writes, in one transaction (`appendRecords`): the round's message
 * groups (each all or nothing, in order), its usage rows (idempotent by metric key, as
 * `appendUsage`), its audit rows and captured payloads. The session's `updated_at` moves once.
 * Each entry is validated as its single-row method validates it, so the same input is refused
 * with the same message either way.
 */
export const AppendRecordsOptions = z.strictObject({
  message_groups: z.array(AppendMessagesOptions).default([]),
  usage: z.array(AppendUsageOptions).default([]),
  audit: z.array(AppendAuditOptions).default([]),
  payloads: z.array(AppendCallPayloadOptions).default([]),
  /**
   * A turn to roll up once the batch is written, from that turn's own calls (the figures
   * `usageRollups` gives it): what a turn's end reports, without reading the whole session.
   */
  rollup_turn: index.optional(),
  /**
   * Ends a turn with the batch, as `completeTurn` does (after the batch's rows, before the
   * roll-up): a turn's last round and its end commit together.
   */
  complete_turn: CompleteTurnOptions.optional(),
  /**
   * false: the batch leaves the session's `updated_at` where it is, unless it ends a turn (an end
   * always moves it); the session and the batch's turns must still exist. For a turn's
   * intermediate rounds, written by the runner that holds the turn: its claim moved `updated_at`
   * when it started and its end moves it again, so a turn of any number of rounds moves it twice.
   * (Each move rewrites the session's row and the seven list indexes that hold `updated_at`.)
   */
  touch_session: z.boolean().default(true),
});
export type AppendRecordsOptions = z.input<typeof AppendRecordsOptions>;

export interface AppendRecordsResult {
  /** Per usage entry, in order: false where its metric key was already recorded. */
  usage_inserted: boolean[];
  /** Per payload entry, in order: false where its metric key already had a payload. */
  payloads_inserted: boolean[];
  /** The roll-up of `rollup_turn`, read in the same transaction; null when none was asked. */
  turn_rollup: TurnUsageRollup | null;
  /**
   * The session's `updated_at` as this batch left it (the time every row of the batch carries);
   * null when the batch wrote nothing or was told not to (`touch_session: false`), so moved
   * nothing. What a caller that keeps state between writes compares with later, without reading
   * the session back.
   */
  updated_at: string | null;
}
