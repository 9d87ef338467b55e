import type { ToolCallEvent } from "../domain/events.js";
import type { ChatMessage } from "../domain/messages.js";
import type { TurnStatus } from "../domain/turn-events.js";
import { interruptedReply } from "./event-kernel.js";
import {
  type ModeStrategy,
  newRoundState,
  type RoundState,
  type TurnContext,
} from "./turn-context.js";
import { describeFailure } from "./turn-failure.js";

/**
 * The rounds of a claimed turn: each round's assistant message and tool replies are stored as one
 * group, with the round's usage, audit and payloads in one write (TurnRecords), until the model answers without tool calls, the turn is cancelled or fails, or
 * `max_rounds` is reached.
 */
export async function runRounds(
  context: TurnContext,
  strategy: ModeStrategy,
  history: ChatMessage[],
): Promise<{ status: TurnStatus; answer: string }> {
  const { max_rounds } = context.config;
  for (let round_index = 1; round_index <= max_rounds; round_index++) {
    context.emit({ type: "round_start", round_index });
    const state = newRoundState(round_index);
    try {
      await strategy.runRound(context, history, state);
    } catch (error) {
      return endEarly(context, history, state, error);
    }
    const group = roundGroup(state);
    context.records.messages(group);
    history.push(...group);
    const last = state.calls.length === 0 || context.cancelled() || round_index === max_rounds;
    // A round that ends the turn is written with the turn's end (run-turn.ts), one commit fewer;
    // one that does not leaves updated_at to the end.
    if (!last) await context.records.flush({ round: true });
    context.emit({
      type: "round_end",
      round_index,
      finish_reason: state.finish_reason,
      tool_calls: state.calls.length,
    });
    if (state.calls.length === 0) return { status: "completed", answer: state.text };
    // A cancellation that arrived while this round's tools ran ends the turn here: another round
    // would log a request that is never sent.
    if (context.cancelled()) return cancelledEnd(context, state);
    if (round_index === max_rounds) {
      await context.audit(
        "max_rounds_reached",
        { max_rounds, pending_tool_calls: state.calls.length },
        round_index,
      );
      return { status: "max_rounds", answer: state.text };
    }
  }
  return { status: "max_rounds", answer: "" };
}

/**
 * The assistant message and its tool replies, in call order, as one atomic group. Reasoning and
 * refusal ride on the message in their own fields: the content is only ever the answer.
 */
function roundGroup(state: RoundState): ChatMessage[] {
  const assistant: ChatMessage = {
    role: "assistant",
    content: state.text,
    tool_calls: state.calls,
    ...(state.reasoning !== "" ? { reasoning: state.reasoning } : {}),
    ...(state.refusal !== "" ? { refusal: state.refusal } : {}),
  };
  return [
    assistant,
    ...state.calls.map(
      (call: ToolCallEvent) => state.replies.get(call.id) ?? interruptedReply(call),
    ),
  ];
}

/**
 * A round cut short by cancellation or a failure: the tools still running are stopped, and what
 * the user saw is kept, with every started tool call answered (by its result or "interrupted").
 */
async function endEarly(
  context: TurnContext,
  history: ChatMessage[],
  state: RoundState,
  error: unknown,
): Promise<{ status: TurnStatus; answer: string }> {
  const cancelled = context.cancelled();
  // Tools already dispatched must not outlive the turn; they answer "interrupted" on the abort.
  context.abandon();
  await Promise.allSettled(state.pending);
  if (state.text || state.reasoning || state.refusal || state.calls.length > 0) {
    const group = roundGroup(state);
    context.records.messages(group);
    history.push(...group);
  }
  if (cancelled) return cancelledEnd(context, state);
  const failure = describeFailure(error);
  await context.audit("turn_failed", { ...failure }, state.round_index);
  context.emit({ type: "error", ...failure });
  return { status: "failed", answer: state.text };
}

/** A turn the user cancelled, once what the round produced is stored. */
async function cancelledEnd(
  context: TurnContext,
  state: RoundState,
): Promise<{ status: TurnStatus; answer: string }> {
  await context.audit(
    "turn_cancelled",
    { partial_text: state.text.length, tool_calls: state.calls.length },
    state.round_index,
  );
  return { status: "cancelled", answer: state.text };
}
