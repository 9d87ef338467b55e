import { formatEventTag } from "../../src/domain/event-protocol.js";
import type { LabSessionConfigInput, ToolInvocationMode } from "../../src/domain/session-config.js";
import type { ChatModel } from "../../src/providers/chat-model.js";
import { createChatModel } from "../../src/providers/create-chat-model.js";
import {
  type BodyStep,
  type ChunkDelta,
  completionChunk,
  completionStream,
  type FakeOpenAIServer,
  type ScriptedReply,
  sseEvent,
  streamReply,
} from "../fake-openai-server.js";

/**
 * Scripts for the fake OpenAI server that speak each mode's protocol: in chat_agent_tools a tool
 * call is a `tool_calls` delta sequence; in dual_agent it is an `<event name=…>` tag in the text,
 * cut across several deltas so the incremental parser has to reassemble it.
 */

export interface ScriptedCall {
  /** The id the endpoint sends (chat_agent_tools); dual_agent assigns its own ids. */
  id: string;
  name: string;
  /** The raw argument text, exactly as the model writes it (may be invalid on purpose). */
  arguments: string;
}

/** Text cut into pieces of `size` characters, as a model streams it. */
export function pieces(text: string, size = 7): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size)
    result.push(text.slice(start, start + size));
  return result;
}

/** The SSE events of a completion that asks for `calls` (and says `text` first). */
export function toolRoundEvents(
  mode: ToolInvocationMode,
  calls: readonly ScriptedCall[],
  text = "",
): string[] {
  if (mode === "dual_agent") {
    const tagged = [text, ...calls.map((call) => formatEventTag(call.name, call.arguments))]
      .filter(Boolean)
      .join(" ");
    return completionStream({ text: pieces(tagged), finishReason: "stop" });
  }
  const toolCalls: NonNullable<ChunkDelta["tool_calls"]> = calls.flatMap((call, index) => {
    const half = Math.ceil(call.arguments.length / 2);
    return [
      { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
      { index, function: { arguments: call.arguments.slice(0, half) } },
      { index, function: { arguments: call.arguments.slice(half) } },
    ];
  });
  return completionStream({ text: text ? pieces(text) : [], toolCalls });
}

export function toolRound(
  mode: ToolInvocationMode,
  calls: readonly ScriptedCall[],
  text = "",
): ScriptedReply {
  return streamReply(toolRoundEvents(mode, calls, text));
}

/** A plain streamed answer. */
export function answerRound(text: string): ScriptedReply {
  return streamReply(completionStream({ text: pieces(text) }));
}

/** The start of a streamed answer, then the connection is cut: no finish reason ever comes. */
export function cutAnswer(text: string): ScriptedReply {
  const body: BodyStep[] = [
    sseEvent(completionChunk({ role: "assistant", content: "" })),
    ...pieces(text).map((piece) => sseEvent(completionChunk({ content: piece }))),
  ];
  return { body, ending: "destroy" };
}

/**
 * A session config whose chat agent is the fake server (no key, no retries) and whose event agent
 * is the sim, named explicitly: left out, it would follow the chat agent to the fake server.
 */
export function fakeServerConfig(
  mode: ToolInvocationMode,
  server: FakeOpenAIServer,
  extra: Omit<LabSessionConfigInput, "tool_invocation_mode" | "chat_agent"> = {},
): LabSessionConfigInput {
  return {
    tool_invocation_mode: mode,
    chat_agent: {
      model: "openai:fake-model",
      base_url: server.baseUrl,
      options: { max_retries: 0 },
    },
    event_agent: { model: "sim" },
    ...extra,
  };
}

/** The fake server's chat model, as `options.models.chat`; no environment is read. */
export function fakeServerModel(server: FakeOpenAIServer): ChatModel {
  return createChatModel(
    { model: "openai:fake-model", base_url: server.baseUrl, options: { max_retries: 0 } },
    { env: {} },
  );
}

/** The messages of the n-th request the fake server received (wire shape). */
export function requestMessages(
  server: FakeOpenAIServer,
  index: number,
): { role: string; content: string; tool_call_id?: string; tool_calls?: { id: string }[] }[] {
  const body = server.requests[index]?.body as { messages?: unknown } | undefined;
  return (body?.messages ?? []) as {
    role: string;
    content: string;
    tool_call_id?: string;
    tool_calls?: { id: string }[];
  }[];
}
