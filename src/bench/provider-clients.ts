import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { jsonSchema, streamText, tool } from "ai";
import { createParser } from "eventsource-parser";
import OpenAI from "openai";
import { OpenAIChatModel } from "../providers/openai/openai-chat-model.js";
import type { StreamLength } from "./provider-stream-bodies.js";

/**
 * The four ways the provider benchmark reads one stream: the raw baseline, our adapter, and two
 * peers. Each returns when the stream is fully consumed, with the time to the first content or
 * tool-call delta as it saw it and how many deltas (reasoning included) it saw: a check that it
 * parsed everything. Each client object (our model, openai-node's client, the AI SDK's provider)
 * is made once and reused for every call, as an application does (the lab: once per turn).
 */
export type StreamKind = "text" | "tool" | "reasoning";

/** The bench server picks the stream by words of the prompt. */
const promptFor = (kind: StreamKind, length: StreamLength) =>
  `${kind === "reasoning" ? "think hard" : "hi"}${length === "short" ? ", short" : ""}`;

export interface ClientRun {
  ttft_ms: number;
  deltas: number;
}

export type BenchClient = (kind: StreamKind, length: StreamLength) => Promise<ClientRun>;
export type BenchClientFactory = (baseUrl: string) => BenchClient;

const SEARCH_PARAMETERS = {
  type: "object",
  properties: { query: { type: "string" } },
  required: ["query"],
};

function requestBody(kind: StreamKind, length: StreamLength): string {
  return JSON.stringify({
    model: "bench-model",
    messages: [{ role: "user", content: promptFor(kind, length) }],
    stream: true,
    stream_options: { include_usage: true },
    ...(kind === "tool"
      ? {
          tools: [
            {
              type: "function",
              function: {
                name: "mock_search",
                description: "search",
                parameters: SEARCH_PARAMETERS,
              },
            },
          ],
        }
      : {}),
  });
}

interface RawToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface RawDelta {
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: RawToolCallDelta[];
}

interface RawChunk {
  choices?: { delta?: RawDelta; finish_reason?: string | null }[];
  usage?: unknown;
}

/**
 * The floor: fetch, an SSE parser and JSON.parse, and the least a caller's own loop does with
 * each chunk: append the text, the reasoning and each tool call's arguments, and keep the finish
 * reason and the usage. Without the appending the baseline would do less than any real caller,
 * and the adapter (which must hand on the whole answer) would be judged against a loop that
 * throws its input away.
 */
export const rawFetchClient: BenchClientFactory = (baseUrl) => async (kind, length) => {
  const start = performance.now();
  let ttft = -1;
  let deltas = 0;
  let text = "";
  let reasoning = "";
  const toolCalls: { id: string; name: string; arguments: string }[] = [];
  let finishReason: string | null = null;
  let usage: unknown = null;
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body: requestBody(kind, length),
  });
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") return;
      const chunk = JSON.parse(event.data) as RawChunk;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) return;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!delta) return;
      if (delta.reasoning_content) {
        reasoning += delta.reasoning_content;
        deltas++;
      }
      if (delta.content || delta.tool_calls) {
        if (ttft < 0) ttft = performance.now() - start;
        deltas++;
      }
      if (delta.content) text += delta.content;
      for (const call of delta.tool_calls ?? []) {
        const index = call.index ?? 0;
        let slot = toolCalls[index];
        if (!slot) {
          slot = { id: "", name: "", arguments: "" };
          toolCalls[index] = slot;
        }
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        slot.arguments += call.function?.arguments ?? "";
      }
    },
  });
  const decoder = new TextDecoder();
  if (!response.body) throw new Error("no body");
  for await (const piece of response.body) parser.feed(decoder.decode(piece, { stream: true }));
  if (finishReason === null || usage === null) throw new Error("the stream was cut");
  if (text.length + reasoning.length + toolCalls.length === 0) throw new Error("no answer");
  return { ttft_ms: ttft, deltas };
};

export const agentLabClient: BenchClientFactory = (baseUrl) => {
  const model = new OpenAIChatModel({ model: "bench-model", base_url: baseUrl, max_retries: 0 });
  return async (kind, length) => {
    const start = performance.now();
    let ttft = -1;
    let deltas = 0;
    const stream = model.stream({
      messages: [{ role: "user", content: promptFor(kind, length), tool_calls: [] }],
      ...(kind === "tool"
        ? { tools: [{ name: "mock_search", description: "search", parameters: SEARCH_PARAMETERS }] }
        : {}),
    });
    // As the runtime's model call reads it (src/runtime/model-call.ts): a batch per body read.
    for await (const batch of stream.batches()) {
      for (const part of batch) {
        if (part.type === "text-delta" || part.type === "tool-call-delta") {
          if (ttft < 0) ttft = performance.now() - start;
          deltas++;
        } else if (part.type === "reasoning-delta") {
          deltas++;
        }
      }
    }
    return { ttft_ms: ttft, deltas };
  };
};

export const openaiNodeClient: BenchClientFactory = (baseUrl) => {
  const client = new OpenAI({ baseURL: baseUrl, apiKey: "bench", maxRetries: 0 });
  return async (kind, length) => {
    const start = performance.now();
    let ttft = -1;
    let deltas = 0;
    const stream = await client.chat.completions.create({
      model: "bench-model",
      messages: [{ role: "user", content: promptFor(kind, length) }],
      stream: true,
      stream_options: { include_usage: true },
      ...(kind === "tool"
        ? {
            tools: [
              {
                type: "function" as const,
                function: {
                  name: "mock_search",
                  description: "search",
                  parameters: SEARCH_PARAMETERS,
                },
              },
            ],
          }
        : {}),
    });
    for await (const chunk of stream) {
      // openai-node types no reasoning field; it passes the chunk through as received.
      const delta = chunk.choices[0]?.delta as RawDelta | undefined;
      if (delta && (delta.content || delta.tool_calls)) {
        if (ttft < 0) ttft = performance.now() - start;
        deltas++;
      } else if (delta?.reasoning_content) {
        deltas++;
      }
    }
    return { ttft_ms: ttft, deltas };
  };
};

export const aiSdkClient: BenchClientFactory = (baseUrl) => {
  const provider = createOpenAICompatible({
    name: "bench",
    baseURL: baseUrl,
    apiKey: "bench",
    includeUsage: true,
  });
  return async (kind, length) => {
    const start = performance.now();
    let ttft = -1;
    let deltas = 0;
    const result = streamText({
      model: provider("bench-model"),
      prompt: promptFor(kind, length),
      maxRetries: 0,
      ...(kind === "tool"
        ? {
            tools: {
              mock_search: tool({
                description: "search",
                inputSchema: jsonSchema<{ query: string }>(SEARCH_PARAMETERS as never),
              }),
            },
          }
        : {}),
    });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta" || part.type === "tool-input-delta") {
        if (ttft < 0) ttft = performance.now() - start;
        deltas++;
      } else if (part.type === "reasoning-delta") {
        deltas++;
      } else if (part.type === "error") {
        throw part.error;
      }
    }
    return { ttft_ms: ttft, deltas };
  };
};
