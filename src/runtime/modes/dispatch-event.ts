import type { ToolCallEvent } from "../../domain/events.js";
import { cutText } from "../../domain/limits.js";
import type { ChatMessage } from "../../domain/messages.js";
import { auditPayload } from "../audit-payload.js";
import type { RoundState, TurnContext } from "../turn-context.js";
import { parseArguments } from "./parse-arguments.js";

/**
 * A tool call as the chat agent wrote it, with its arguments parsed when they are JSON. Arguments
 * over `maxChars` are refused (the tool is not run) and only their start is kept, with a marker:
 * the call is stored in the assistant message, and a runaway argument must not be stored whole.
 */
export function eventFrom(
  id: string,
  name: string,
  raw_arguments: string,
  maxChars: number,
  cutOff = false,
): { event: ToolCallEvent; parsed: ReturnType<typeof parseArguments> } {
  if (raw_arguments.length > maxChars) {
    return {
      event: {
        id,
        name,
        arguments: {},
        raw_arguments: cutText(raw_arguments, maxChars, "tool arguments"),
      },
      parsed: {
        ok: false,
        error: `the arguments are ${raw_arguments.length} characters, over limits.max_tool_argument_chars (${maxChars}): the tool was not run`,
      },
    };
  }
  const parsed = cutOff
    ? ({ ok: false, error: "the event tag was cut off before </event>" } as const)
    : parseArguments(raw_arguments);
  return {
    event: { id, name, arguments: parsed.ok ? parsed.value : {}, raw_arguments },
    parsed,
  };
}

/**
 * Announces a tool call (turn event, audit) and starts `handle`, whose reply is stored under the
 * call's id. Both modes dispatch this way; the round awaits `state.pending`, and so does the turn's
 * failure path, which answers whatever never finished.
 */
export function dispatchEvent(
  context: TurnContext,
  state: RoundState,
  event: ToolCallEvent,
  handle: () => Promise<ChatMessage>,
): Promise<void> {
  const { round_index } = state;
  state.calls.push(event);
  context.emit({ type: "tool_call", round_index, event });
  const run = (async () => {
    await context.audit(
      "event_detected",
      {
        event_id: event.id,
        event_name: event.name,
        raw_arguments: auditPayload(event.raw_arguments),
      },
      round_index,
    );
    state.replies.set(event.id, await handle());
  })();
  // Observed later (Promise.all or the failure path); this keeps an early failure from being
  // reported as unhandled in between.
  run.catch(() => {});
  state.pending.push(run);
  return run;
}
