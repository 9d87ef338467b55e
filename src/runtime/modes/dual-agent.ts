import { formatEventTag, renderEventResult } from "../../domain/event-protocol.js";
import type { ChatMessage } from "../../domain/messages.js";
import { callModel } from "../model-call.js";
import { eventCatalog } from "../tool-definitions.js";
import type { ModeStrategy, RoundState, TurnContext } from "../turn-context.js";
import { samplingOf } from "./agent-sampling.js";
import { repairArguments } from "./argument-fallback.js";
import { DEFAULT_SYSTEM_PROMPT, keepAside, systemMessage } from "./chat-agent-tools.js";
import { dispatchEvent, eventFrom } from "./dispatch-event.js";
import { EventTagParser, type ParsedPiece } from "./event-tag-parser.js";

/**
 * The chat agent gets no native tools: its system prompt carries an event catalog and it writes
 * `<event name="…">{…}</event>` in its text. Each event is dispatched the moment its tag closes
 * (early dispatch), repaired by the event agent when its arguments are missing, not JSON or
 * refused by the schema, and its result goes back as text in the next round.
 */
export const dualAgent: ModeStrategy = {
  mode: "dual_agent",

  /** The user's prompt (or the default), then the event catalog, which the mode always adds. */
  systemPrompt(context: Pick<TurnContext, "config" | "tools">): string {
    const prompt = context.config.chat_agent.system_prompt ?? DEFAULT_SYSTEM_PROMPT;
    return `${prompt}\n\n${eventCatalog(context.tools)}`;
  },

  async runRound(context: TurnContext, history: readonly ChatMessage[], state: RoundState) {
    const { round_index } = state;
    const agent = context.config.chat_agent;
    const parser = new EventTagParser();
    const take = (pieces: ParsedPiece[]) => {
      for (const piece of pieces) {
        if (piece.type === "text") {
          state.text += piece.text;
          context.emit({ type: "text_delta", round_index, text: piece.text });
        } else {
          dispatch(context, history, state, piece);
        }
      }
    };
    const result = await callModel(context, {
      model: context.chat_model,
      request: {
        messages: [systemMessage(dualAgent.systemPrompt(context)), ...renderForEvents(history)],
        ...samplingOf(agent),
        conversation_id: context.session_id,
      },
      agent: "chat_agent",
      call_kind: "chat_completion",
      round_index,
      metric_key: `chat:${context.turn_index}:${round_index}`,
      ...keepAside(state),
      onText: (text) => take(parser.push(text)),
    });
    take(parser.end());
    state.finish_reason = result.finish_reason;
    await Promise.all(state.pending);
  },
};

function dispatch(
  context: TurnContext,
  history: readonly ChatMessage[],
  state: RoundState,
  piece: Extract<ParsedPiece, { type: "event" }>,
): void {
  const { round_index } = state;
  const id = `evt_${context.turn_index}_${round_index}_${state.calls.length + 1}`;
  const { event, parsed } = eventFrom(
    id,
    piece.name,
    piece.raw_arguments,
    context.config.limits.max_tool_argument_chars,
    !piece.complete,
  );
  void dispatchEvent(context, state, event, async () => {
    let final = event;
    let used_fallback = false;
    let argument_error: string | null = null;
    const verdict = parsed.ok ? context.tools.validate(event.name, parsed.value) : parsed;
    // An unknown tool is the kernel's to refuse; the event agent only repairs arguments.
    if (!verdict.ok && context.tools.has(event.name)) {
      used_fallback = true;
      const repaired = await repairArguments(context, round_index, event, verdict.error, history);
      if (repaired.ok) {
        final = { ...event, arguments: repaired.arguments, raw_arguments: repaired.raw_arguments };
        // History keeps what actually ran; what the chat agent first wrote is in the audit log.
        state.calls[state.calls.indexOf(event)] = final;
      } else {
        argument_error = `${verdict.error}; ${repaired.error}`;
      }
    }
    return context.kernel.execute(final, {
      round_index,
      used_fallback,
      argument_error,
      on_edit: (edited) => {
        state.calls[state.calls.indexOf(final)] = edited;
      },
    });
  });
}

/**
 * The stored canonical history in the shape a tag-speaking model reads: tool calls back as tags at
 * the end of the assistant's text, tool replies as one user message of `<event_result>` blocks.
 */
export function renderForEvents(history: readonly ChatMessage[]): ChatMessage[] {
  const rendered: ChatMessage[] = [];
  let run: ChatMessage[] = [];
  const flush = () => {
    if (run.length === 0) return;
    rendered.push(renderResults(run));
    run = [];
  };
  for (const message of history) {
    if (message.role === "tool") {
      run.push(message);
      continue;
    }
    flush();
    rendered.push(
      message.role === "assistant" && message.tool_calls.length > 0
        ? renderAssistant(message)
        : message,
    );
  }
  flush();
  return rendered;
}

/**
 * Renders kept per history message: the history is the same objects from round to round and turn
 * to turn, so each call renders only what is new, and hands a model the same message objects
 * (which is what lets the sim tokenize a message once).
 */
const assistants = new WeakMap<ChatMessage, ChatMessage>();
const results = new WeakMap<ChatMessage, { run: readonly ChatMessage[]; message: ChatMessage }>();

function renderAssistant(message: ChatMessage): ChatMessage {
  let done = assistants.get(message);
  if (done === undefined) {
    const tags = message.tool_calls.map((call) => formatEventTag(call.name, call.raw_arguments));
    const { tool_calls: _calls, ...rest } = message;
    done = {
      ...rest,
      content: [message.content, ...tags].filter(Boolean).join("\n"),
      tool_calls: [],
    };
    assistants.set(message, done);
  }
  return done;
}

/** A run of tool replies as one user message of `<event_result>` blocks. */
function renderResults(run: readonly ChatMessage[]): ChatMessage {
  const first = run[0] as ChatMessage;
  const kept = results.get(first);
  if (
    kept !== undefined &&
    kept.run.length === run.length &&
    kept.run.every((reply, index) => reply === run[index])
  ) {
    return kept.message;
  }
  const content = run
    .map((message) =>
      renderEventResult({
        id: message.tool_call_id ?? "",
        name: message.name ?? "",
        content: message.content,
      }),
    )
    .join("\n");
  const message: ChatMessage = { role: "user", content, tool_calls: [] };
  results.set(first, { run: [...run], message });
  return message;
}
