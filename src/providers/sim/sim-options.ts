import { z } from "zod";
import { parseInput } from "../../domain/validation.js";

/**
 * How the simulated model behaves. Every field is optional; the defaults make it instant and
 * well-behaved, which is what tests and the default lab config want. Set `first_token_ms` and
 * `tokens_per_second` (e.g. 300 and 80, see `SIM_REALISTIC_TIMING`) to make its timings look like
 * a hosted endpoint, and `malformed_arguments_rate` to exercise the argument fallback path.
 */
export const SimOptions = z.strictObject({
  /** Delay from the stream's start to the first delta, in milliseconds. Default 0. */
  first_token_ms: z.number().finite().nonnegative().default(0),
  /**
   * Completion speed. 0 (the default) streams every delta at once; otherwise the deltas are paced
   * so that the completion takes `completion_tokens / tokens_per_second` seconds after the first
   * token.
   */
  tokens_per_second: z.number().finite().nonnegative().default(0),
  /**
   * Probability (0..1) that a tool call the model chooses on its own gets malformed arguments:
   * truncated JSON, or valid JSON without a required field. Decided per call by a seeded draw.
   * Forced calls (`tool_choice: { name }`) and `response_format` replies are never malformed.
   */
  malformed_arguments_rate: z.number().min(0).max(1).default(0),
  /**
   * Streams a short thinking text (`reasoning-delta`) before each reply, counted as reasoning
   * tokens inside the completion, as a reasoning model's would be. Default false.
   */
  reasoning: z.boolean().default(false),
  /** Seed of every pseudo-random choice (malformed calls, delta sizes, call ids). */
  seed: z.number().int().default(42),
});
export type SimOptions = z.output<typeof SimOptions>;
export type SimOptionsInput = z.input<typeof SimOptions>;

/** Timings that look like a small hosted model; spread into the options to use them. */
export const SIM_REALISTIC_TIMING = { first_token_ms: 300, tokens_per_second: 80 } as const;

export const SimModelSettings = z.strictObject({
  /** Makes the model string "sim:NAME" instead of "sim". */
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, "a sim model name is letters, digits, _ . : -")
    .optional(),
  options: SimOptions.prefault({}),
});
export type SimModelSettings = z.output<typeof SimModelSettings>;
export type SimModelSettingsInput = z.input<typeof SimModelSettings>;

/** Validates the settings; an `InvalidInputError` names every offending field. */
export function parseSimModelSettings(settings: unknown): SimModelSettings {
  return parseInput(SimModelSettings, settings ?? {}, "sim model settings");
}
