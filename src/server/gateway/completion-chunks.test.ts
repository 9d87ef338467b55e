import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tokenUsage } from "../../domain/usage.js";
import {
  type ChatCompletion,
  CompletionChunkWriter,
  completionUsage,
  newCompletionId,
  renderCompletion,
} from "./completion-chunks.js";

/**
 * The gateway's own renderings, read back by clients no one here wrote: the `openai` package's
 * stream reader and accumulator, the AI SDK's openai-compatible provider, and eventsource-parser
 * with zod shapes mirroring openai's types. No network: each client gets a fetch that answers with
 * the rendered body.
 */

const USAGE = tokenUsage({
  prompt_tokens: 120,
  completion_tokens: 40,
  cached_tokens: 96,
  reasoning_tokens: 12,
});

/** A stream with everything: reasoning, text (multi-byte too), two tool calls, usage. */
function fullStream(include_usage: boolean): { writer: CompletionChunkWriter; sse: string } {
  const writer = new CompletionChunkWriter({
    model: "sim",
    include_usage,
    created: 1_764_547_200,
  });
  const sse = [
    writer.reasoning("Look it up "),
    writer.reasoning("first."),
    writer.text(""),
    writer.text("Checking "),
    writer.text("the weather — ☀️ "),
    writer.toolCall({ id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' }),
    writer.toolCall({ id: "call_b", name: "get_weather", arguments: '{"city":"Oslo"}' }),
    writer.finish("tool_calls", USAGE),
  ].join("");
  return { writer, sse };
}

/** A fetch that answers every request with `body`, and keeps the requests' bodies. */
function answering(body: string, contentType: string) {
  const requests: unknown[] = [];
  const fetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
    requests.push(JSON.parse(String(init?.body)));
    return new Response(body, { status: 200, headers: { "content-type": contentType } });
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

// Mirrors of openai's ChatCompletionChunk and ChatCompletion types (openai/resources/chat),
// strict where a client relies on the field.
const UsageShape = z.strictObject({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.strictObject({ cached_tokens: z.number().int() }),
  completion_tokens_details: z.strictObject({ reasoning_tokens: z.number().int() }),
});
const ToolCallDeltaShape = z.strictObject({
  index: z.number().int(),
  id: z.string(),
  type: z.literal("function"),
  function: z.strictObject({ name: z.string(), arguments: z.string() }),
});
const ChunkShape = z.strictObject({
  id: z.string().startsWith("chatcmpl-"),
  object: z.literal("chat.completion.chunk"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.strictObject({
      index: z.number().int(),
      delta: z.strictObject({
        role: z.literal("assistant").optional(),
        content: z.string().optional(),
        reasoning_content: z.string().optional(),
        refusal: z.string().optional(),
        tool_calls: z.array(ToolCallDeltaShape).optional(),
      }),
      logprobs: z.null(),
      finish_reason: z
        .enum(["stop", "length", "tool_calls", "content_filter", "function_call"])
        .nullable(),
    }),
  ),
  usage: UsageShape.optional(),
});
type ChunkShape = z.output<typeof ChunkShape>;

function parseEvents(sse: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  parser.feed(sse);
  return events;
}

describe("CompletionChunkWriter: the wire shape", () => {
  it("writes chunks openai's types describe, one id for all, the role first, usage last, then [DONE]", () => {
    const { writer, sse } = fullStream(true);
    const events = parseEvents(sse);
    expect(events.at(-1)?.data).toBe("[DONE]");
    const chunks: ChunkShape[] = events.slice(0, -1).map((event) => {
      expect(event.event).toBeUndefined();
      return ChunkShape.parse(JSON.parse(event.data));
    });
    expect(writer.id).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: writer.id, created: 1_764_547_200, model: "sim" });
    }
    expect(chunks[0]?.choices[0]?.delta).toEqual({
      role: "assistant",
      reasoning_content: "Look it up ",
    });
    expect(chunks.slice(1).every((chunk) => chunk.choices[0]?.delta.role === undefined)).toBe(true);
    // reasoning ×2, text ×2 (the empty delta sends nothing), tool calls ×2, finish, usage.
    expect(chunks).toHaveLength(8);
    expect(chunks[4]?.choices[0]?.delta.tool_calls).toEqual([
      {
        index: 0,
        id: "call_a",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(chunks[5]?.choices[0]?.delta.tool_calls?.[0]?.index).toBe(1);
    expect(chunks[6]?.choices[0]).toEqual({
      index: 0,
      delta: {},
      logprobs: null,
      finish_reason: "tool_calls",
    });
    expect(chunks[7]).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 120,
        completion_tokens: 40,
        total_tokens: 160,
        prompt_tokens_details: { cached_tokens: 96 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    });
    expect(sse.endsWith("\n\ndata: [DONE]\n\n")).toBe(true);
  });

  it("sends no usage chunk unless the client asked for it", () => {
    const { sse } = fullStream(false);
    const chunks = parseEvents(sse)
      .slice(0, -1)
      .map((event) => ChunkShape.parse(JSON.parse(event.data)));
    expect(chunks).toHaveLength(7);
    expect(chunks.every((chunk) => chunk.choices.length === 1 && !chunk.usage)).toBe(true);
  });

  it("puts the role on the finish chunk of an empty answer, and refuses writes after the end", () => {
    const writer = new CompletionChunkWriter({ model: "m", include_usage: false });
    const [finish] = parseEvents(writer.finish("stop", USAGE));
    expect(ChunkShape.parse(JSON.parse(finish?.data ?? "")).choices[0]?.delta).toEqual({
      role: "assistant",
    });
    expect(() => writer.text("late")).toThrow(/already finished/);
  });

  it("makes a fresh id for each response, and reads the clock in seconds", () => {
    expect(newCompletionId()).not.toBe(newCompletionId());
    const before = Math.floor(Date.now() / 1000);
    const writer = new CompletionChunkWriter({ model: "m", include_usage: false });
    expect(writer.created).toBeGreaterThanOrEqual(before);
    expect(writer.created).toBeLessThanOrEqual(before + 1);
  });
});

describe("CompletionChunkWriter read by the openai package", () => {
  function client(body: string, contentType = "text/event-stream") {
    const fake = answering(body, contentType);
    return {
      openai: new OpenAI({ apiKey: "lab-token", baseURL: "http://127.0.0.1:9/v1", ...fake }),
      requests: fake.requests,
    };
  }

  it("iterates the raw chunks", async () => {
    const { sse, writer } = fullStream(true);
    const { openai } = client(sse);
    const stream = await openai.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "weather?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toHaveLength(8);
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([writer.id]));
    expect(chunks.at(-1)?.usage?.prompt_tokens_details?.cached_tokens).toBe(96);
  });

  it("assembles the final completion: text, tool calls, finish reason, usage", async () => {
    const { sse, writer } = fullStream(true);
    const { openai } = client(sse);
    const runner = openai.chat.completions.stream({
      model: "sim",
      messages: [{ role: "user", content: "weather?" }],
      stream_options: { include_usage: true },
    });
    const text: string[] = [];
    runner.on("content.delta", ({ delta }) => text.push(delta));
    const completion = await runner.finalChatCompletion();
    expect(text.join("")).toBe("Checking the weather — ☀️ ");
    expect(completion.id).toBe(writer.id);
    expect(completion.model).toBe("sim");
    const [choice] = completion.choices;
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.role).toBe("assistant");
    expect(choice?.message.content).toBe("Checking the weather — ☀️ ");
    expect(
      choice?.message.tool_calls?.map((call) =>
        call.type === "function" ? [call.id, call.function.name, call.function.arguments] : [],
      ),
    ).toEqual([
      ["call_a", "get_weather", '{"city":"Paris"}'],
      ["call_b", "get_weather", '{"city":"Oslo"}'],
    ]);
    expect(completion.usage).toMatchObject({
      prompt_tokens: 120,
      completion_tokens: 40,
      total_tokens: 160,
    });
  });

  it("reads the non-streaming completion", async () => {
    const body = renderCompletion(
      { model: "sim", id: "chatcmpl-fixed", created: 1_764_547_200 },
      {
        content: "",
        tool_calls: [{ id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' }],
        finish_reason: "tool_calls",
        usage: USAGE,
      },
    );
    const { openai } = client(JSON.stringify(body), "application/json");
    const completion = await openai.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "weather?" }],
    });
    expect(completion).toEqual(body);
    expect(completion.choices[0]?.message.content).toBeNull();
  });
});

describe("CompletionChunkWriter read by the AI SDK (openai-compatible)", () => {
  function provider(body: string, contentType: string) {
    const fake = answering(body, contentType);
    const lab = createOpenAICompatible({
      name: "lab",
      baseURL: "http://127.0.0.1:9/v1",
      apiKey: "lab-token",
      includeUsage: true,
      fetch: fake.fetch,
    });
    return { model: lab.chatModel("sim"), requests: fake.requests };
  }

  it("streamText: text, reasoning, tool calls with parsed input, finish reason, usage", async () => {
    const { sse } = fullStream(true);
    const { model, requests } = provider(sse, "text/event-stream");
    const result = streamText({
      model,
      prompt: "weather?",
      tools: {
        get_weather: tool({
          description: "Weather for a city.",
          inputSchema: jsonSchema<{ city: string }>({
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
          }),
        }),
      },
    });
    expect(await result.text).toBe("Checking the weather — ☀️ ");
    expect(await result.reasoningText).toBe("Look it up first.");
    const calls = await result.toolCalls;
    expect(calls.map((call) => [call.toolCallId, call.toolName, call.input])).toEqual([
      ["call_a", "get_weather", { city: "Paris" }],
      ["call_b", "get_weather", { city: "Oslo" }],
    ]);
    expect(await result.finishReason).toBe("tool-calls");
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(120);
    expect(usage.outputTokens).toBe(40);
    expect(usage.inputTokenDetails.cacheReadTokens).toBe(96);
    expect(usage.outputTokenDetails.reasoningTokens).toBe(12);
    expect(requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("generateText: the non-streaming completion", async () => {
    const body: ChatCompletion = renderCompletion(
      { model: "sim" },
      {
        content: "Sunny in Paris.",
        reasoning: "The tool said so.",
        finish_reason: "stop",
        usage: USAGE,
      },
    );
    const { model } = provider(JSON.stringify(body), "application/json");
    const result = await generateText({ model, prompt: "weather?" });
    expect(result.text).toBe("Sunny in Paris.");
    expect(result.reasoningText).toBe("The tool said so.");
    expect(result.finishReason).toBe("stop");
    expect(result.usage.inputTokens).toBe(120);
    expect(result.usage.inputTokenDetails.cacheReadTokens).toBe(96);
    expect(result.response.id).toBe(body.id);
  });
});

describe("renderCompletion", () => {
  it("writes one chat.completion object: content or null, tool calls when any, usage", () => {
    const body = renderCompletion(
      { model: "gpt-4.1-mini", id: "chatcmpl-x", created: 5 },
      {
        content: "",
        tool_calls: [
          { id: "call_a", name: "a", arguments: "{}" },
          { id: "call_b", name: "b", arguments: '{"n":1}' },
        ],
        finish_reason: "tool_calls",
        usage: USAGE,
      },
    );
    expect(body).toEqual({
      id: "chatcmpl-x",
      object: "chat.completion",
      created: 5,
      model: "gpt-4.1-mini",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            refusal: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "a", arguments: "{}" } },
              { id: "call_b", type: "function", function: { name: "b", arguments: '{"n":1}' } },
            ],
          },
          logprobs: null,
          finish_reason: "tool_calls",
        },
      ],
      usage: completionUsage(USAGE),
    });
    const plain = renderCompletion(
      { model: "m" },
      { content: "Hi", finish_reason: "stop", usage: USAGE },
    );
    expect(plain.choices[0].message).toEqual({ role: "assistant", content: "Hi", refusal: null });
    expect(plain.id).toMatch(/^chatcmpl-/);
  });
});
