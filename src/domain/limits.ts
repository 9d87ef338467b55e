import { z } from "zod";
import { sliceWhole } from "./json-limits.js";

/**
 * Size limits on what a turn stores (README, "Limits"). Each bounds one row: a model answer, one
 * tool call's arguments, one tool result. Past a limit the lab keeps the start with a visible
 * marker instead of the whole payload, so one runaway model or tool cannot bloat the file.
 */
export const Limits = z.strictObject({
  /** Text plus tool-call arguments one model call may stream; past it the call is stopped. */
  max_output_chars: z.number().int().min(1).default(1_000_000),
  /** One tool call's raw arguments; past it the call is refused as a tool error, not run. */
  max_tool_argument_chars: z.number().int().min(1).default(262_144),
  /** One tool result as sent back to the model; past it the result is cut. */
  max_tool_result_chars: z.number().int().min(1).default(262_144),
});
export type Limits = z.output<typeof Limits>;

/** The start of `text`, at most `max` characters, with a marker saying what was cut. */
export function cutText(text: string, max: number, what: string): string {
  if (text.length <= max) return text;
  return `${sliceWhole(text, max)}…[cut: ${what} over ${max} characters, ${text.length - max} more not stored]`;
}

/** The marker alone, for a stream stopped at the limit (its full length is unknown). */
export function cutMarker(what: string, max: number): string {
  return `…[cut: ${what} over ${max} characters; the rest was not received]`;
}
