import type { ChatMessage } from "../../domain/messages.js";
import { callModel, type ModelCallSpec } from "../model-call.js";
import { toolDefinitions } from "../tool-definitions.js";
import type { ModeStrategy, RoundState, TurnContext } from "../turn-context.js";
import { samplingOf } from "./agent-sampling.js";
import { dispatchEvent, eventFrom } from "./dispatch-event.js";

export const DEFAULT_SYSTEM_PROMPT =
  "You are a helpful assistant. Use the available tools when they help answer the user, then answer from their results.";

/**
 * Native function calling: the chat agent gets the tool schemas through `tools`; its tool calls run
 * in parallel once the stream has finished; arguments that are not valid go back to the model as
 * a tool error (no fallback in this mode).
 */
export const chatAgentTools: ModeStrategy = {
  mode: "chat_agent_tools",

  systemPrompt(context: Pick<TurnContext, "config" | "tools">): string {
    return context.config.chat_agent.system_prompt ?? DEFAULT_SYSTEM_PROMPT;
  },

  async runRound(context: TurnContext, history: readonly ChatMessage[], state: RoundState) {
    const { round_index } = state;
    const agent = context.config.chat_agent;
    const result = await callModel(context, {
      model: context.chat_model,
      request: {
        messages: [systemMessage(chatAgentTools.systemPrompt(context)), ...history],
        tools: toolDefinitions(context.tools),
        ...samplingOf(agent),
        conversation_id: context.session_id,
      },
      agent: "chat_agent",
      call_kind: "chat_completion",
      round_index,
      metric_key: `chat:${context.turn_index}:${round_index}`,
      ...keepAside(state),
      onText: (text) => {
        state.text += text;
        context.emit({ type: "text_delta", round_index, text });
      },
    });
    state.finish_reason = result.finish_reason;

    // Some endpoints repeat a tool call id within one message. Shared ids would share one reply
    // slot and one metric key, and strict endpoints refuse them in history, so a repeated id gets
    // a suffix ("call_0_2"), used in the history and the metrics alike.
    const usedIds = new Set<string>();
    const uniqueId = (id: string) => {
      let candidate = id;
      for (let count = 2; usedIds.has(candidate); count++) candidate = `${id}_${count}`;
      usedIds.add(candidate);
      return candidate;
    };
    const runs = result.tool_calls.map((call) => {
      const { event, parsed } = eventFrom(
        uniqueId(call.id),
        call.name,
        call.raw_arguments,
        context.config.limits.max_tool_argument_chars,
      );
      return dispatchEvent(context, state, event, () =>
        context.kernel.execute(event, {
          round_index,
          used_fallback: false,
          argument_error: parsed.ok ? null : parsed.error,
          on_edit: (edited) => {
            state.calls[state.calls.indexOf(event)] = edited;
          },
        }),
      );
    });
    await Promise.all(runs);
  },
};

/** A round's callbacks that keep the chat agent's reasoning and refusal apart from its answer. */
export function keepAside(state: RoundState): Pick<ModelCallSpec, "onReasoning" | "onRefusal"> {
  return {
    onReasoning: (text) => {
      state.reasoning += text;
    },
    onRefusal: (text) => {
      state.refusal += text;
    },
  };
}

export function systemMessage(content: string): ChatMessage {
  return { role: "system", content, tool_calls: [] };
}
