import type { ToolCallEvent } from "../../domain/events.js";
import type { ChatMessage } from "../../domain/messages.js";
import type { RoundState, TurnContext } from "../turn-context.js";
import { parseArguments } from "./parse-arguments.js";

/** A tool call as the chat agent wrote it, with its arguments parsed when they are JSON. */
export function eventFrom(
  id: string,
  name: string,
  raw_arguments: string,
  cutOff = false,
): { event: ToolCallEvent; parsed: ReturnType<typeof parseArguments> } {
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
      { event_id: event.id, event_name: event.name, raw_arguments: event.raw_arguments },
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
