import type { ChatMessage } from "../../domain/messages.js";
import type { ChatModelRequest, ResponseFormat, ToolChoice } from "../chat-model.js";
import type { SendReasoning } from "./openai-config.js";

/**
 * The Chat Completions request body, rendered from the port's request. Fields the port leaves
 * unset are left out (not sent as null): strict servers refuse nulls they do not expect.
 */

export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface WireMessage {
  role: ChatMessage["role"];
  content: string;
  name?: string;
  tool_call_id?: string;
  tool_calls?: WireToolCall[];
  reasoning_content?: string;
  reasoning?: string;
}

export interface RenderOptions {
  /** The field an assistant's reasoning goes back in; false (the default) never sends it. */
  send_reasoning?: SendReasoning;
}

export interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export type WireToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; function: { name: string } };

export type WireResponseFormat =
  | { type: "json_object" }
  | {
      type: "json_schema";
      json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean };
    };

export interface ChatCompletionsBody {
  model: string;
  messages: WireMessage[];
  stream: true;
  stream_options: { include_usage: true };
  tools?: WireTool[];
  tool_choice?: WireToolChoice;
  response_format?: WireResponseFormat;
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
  seed?: number;
  stop?: string[];
}

export function renderMessage(message: ChatMessage, options: RenderOptions = {}): WireMessage {
  // A refusal with no answer is sent as the answer: strict endpoints refuse an assistant message
  // with neither content nor tool calls, and the model should see that it refused.
  const content =
    message.role === "assistant" && message.content === "" && message.refusal
      ? message.refusal
      : message.content;
  const wire: WireMessage = { role: message.role, content };
  if (message.name !== undefined) wire.name = message.name;
  if (message.tool_call_id !== undefined) wire.tool_call_id = message.tool_call_id;
  // An empty `tool_calls` list is refused by OpenAI ("empty array"), so it is left out.
  if (message.tool_calls.length > 0) {
    wire.tool_calls = message.tool_calls.map((call) => ({
      id: call.id,
      type: "function",
      // The model's exact text, not a re-serialisation of the parsed arguments, so the history
      // the model sees is the history it wrote (and prefix caches keep matching).
      function: { name: call.name, arguments: call.raw_arguments },
    }));
  }
  const field = options.send_reasoning ?? false;
  if (field !== false && message.role === "assistant" && message.reasoning) {
    wire[field] = message.reasoning;
  }
  return wire;
}

export function renderTools(tools: ChatModelRequest["tools"]): WireTool[] {
  return (tools ?? []).map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

export function renderToolChoice(choice: ToolChoice): WireToolChoice {
  return typeof choice === "string"
    ? choice
    : { type: "function", function: { name: choice.name } };
}

export function renderResponseFormat(format: ResponseFormat): WireResponseFormat {
  if (format.type === "json_object") return { type: "json_object" };
  const json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean } = {
    name: format.name,
    schema: format.schema,
  };
  if (format.strict !== undefined) json_schema.strict = format.strict;
  return { type: "json_schema", json_schema };
}

export function renderRequestBody(
  model: string,
  request: ChatModelRequest,
  options: RenderOptions = {},
): ChatCompletionsBody {
  const body: ChatCompletionsBody = {
    model,
    messages: request.messages.map((message) => renderMessage(message, options)),
    stream: true,
    // Without this, OpenAI streams report no token counts at all.
    stream_options: { include_usage: true },
  };
  const tools = renderTools(request.tools);
  // An empty `tools` list is refused by OpenAI, and `tool_choice` without tools too.
  if (tools.length > 0) {
    body.tools = tools;
    if (request.tool_choice !== undefined) body.tool_choice = renderToolChoice(request.tool_choice);
  }
  if (request.response_format !== undefined) {
    body.response_format = renderResponseFormat(request.response_format);
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  // `max_tokens`, not `max_completion_tokens`: the one every compatible server understands.
  if (request.max_tokens !== undefined) body.max_tokens = request.max_tokens;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = [...request.stop];
  return body;
}

/**
 * The body of a pass-through call: the client's request as it wrote it (key order included), with
 * the three fields the lab must own. `model` is the upstream's name for the model (the client
 * named the lab's upstream); `stream: true` because the lab always reads a stream, even for a
 * client that asked for one JSON answer; `include_usage` so every call is recorded with the
 * endpoint's own counts. The client's other `stream_options` are kept.
 */
export function passThroughBody(
  model: string,
  raw: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const streamOptions = raw.stream_options;
  return {
    ...raw,
    model,
    stream: true,
    stream_options: {
      ...(isRecord(streamOptions) ? streamOptions : {}),
      include_usage: true,
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
