import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type BodyStep,
  collectStream,
  completionChunk,
  completionStream,
  FakeOpenAIServer,
  SSE_DONE,
  sseEvent,
  streamReply,
} from "../../../test/fake-openai-server.js";
import { ChatMessage } from "../../domain/messages.js";
import type { ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { countTokens, promptTokens } from "../tokenizer.js";
import { OpenAIChatModel } from "./openai-chat-model.js";
import type { OpenAIConfigInput } from "./openai-config.js";

/** The successful streams of the adapter: parts, request shape, usage, timing. Faults are in openai-faults.test.ts. */

const KEY = "sk-test-KEY-7f3a9c";

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await FakeOpenAIServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(config: Partial<OpenAIConfigInput> = {}): OpenAIChatModel {
  return new OpenAIChatModel(
    { model: "gpt-test", base_url: server.baseUrl, api_key_env: "TEST_OPENAI_KEY", ...config },
    { env: { TEST_OPENAI_KEY: KEY } },
  );
}

const conversation: ChatMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Find cats and open a ticket.", name: "ada" },
  {
    role: "assistant",
    content: "",
    tool_calls: [
      {
        id: "call_1",
        name: "mock_search",
        arguments: { q: "cats" },
        raw_arguments: '{"q": "cats"}',
      },
    ],
  },
  { role: "tool", content: '{"results":["Cat"]}', tool_call_id: "call_1", name: "mock_search" },
  { role: "user", content: "Thanks, now summarise." },
].map((message) => ChatMessage.parse(message));

const searchTool = {
  name: "mock_search",
  description: "Searches.",
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
};

const request: ChatModelRequest = { messages: conversation };

function types(parts: readonly ChatModelPart[]): string[] {
  return parts.map((part) => part.type);
}

function ofType<T extends ChatModelPart["type"]>(
  parts: readonly ChatModelPart[],
  type: T,
): Extract<ChatModelPart, { type: T }>[] {
  return parts.filter((part): part is Extract<ChatModelPart, { type: T }> => part.type === type);
}

/** Parts with the clock readings taken out, for comparing runs. */
function withoutTiming(parts: readonly ChatModelPart[]): unknown[] {
  return parts.map((part) => {
    if (part.type === "first-token") return { type: part.type };
    if (part.type === "response-start") return { ...part, at_ms: 0, started_at: 0 };
    if (part.type === "finish") return { ...part, ttft_ms: 0, elapsed_ms: 0 };
    return part;
  });
}

describe("OpenAIChatModel streaming", () => {
  it("is labelled as a real openai model", () => {
    const chat = model();
    expect(chat.provider).toBe("openai");
    expect(chat.simulated).toBe(false);
    expect(chat.model).toBe("gpt-test");
  });

  it("streams text as response-start, first-token, deltas, usage, finish, and sends the documented body", async () => {
    server.enqueue(
      streamReply(
        completionStream({
          text: ["Hel", "lo"],
          usage: { prompt_tokens: 42, completion_tokens: 2, cached_tokens: 32 },
        }),
        { headers: { "x-request-id": "req_abc123" } },
      ),
    );
    const { parts, error } = await collectStream(
      model().stream({
        ...request,
        tools: [searchTool],
        tool_choice: { name: "mock_search" },
        response_format: {
          type: "json_schema",
          name: "answer",
          schema: { type: "object" },
          strict: true,
        },
        temperature: 0,
        max_tokens: 64,
        top_p: 0.9,
        seed: 3,
        stop: ["END"],
      }),
    );

    expect(error).toBeNull();
    expect(types(parts)).toEqual([
      "response-start",
      "first-token",
      "text-delta",
      "text-delta",
      "usage",
      "finish",
    ]);
    expect(parts[0]).toMatchObject({ attempt: 1, status: 200, request_id: "req_abc123" });
    expect(ofType(parts, "text-delta").map((part) => part.text)).toEqual(["Hel", "lo"]);
    expect(ofType(parts, "usage")).toEqual([
      {
        type: "usage",
        usage: {
          prompt_tokens: 42,
          completion_tokens: 2,
          total_tokens: 44,
          cached_tokens: 32,
          reasoning_tokens: 0,
          cache_write_tokens: 0,
        },
        estimated: false,
        source: "endpoint",
        cost_usd: null,
        raw: {
          prompt_tokens: 42,
          completion_tokens: 2,
          total_tokens: 44,
          prompt_tokens_details: { cached_tokens: 32 },
        },
      },
    ]);
    const [finish] = ofType(parts, "finish");
    expect(finish).toMatchObject({
      finish_reason: "stop",
      attempts: 1,
      response_model: "fake-model",
      response_id: "chatcmpl-fake",
      system_fingerprint: null,
    });
    expect(finish?.ttft_ms).toBe(ofType(parts, "first-token")[0]?.ttft_ms);
    expect(finish?.elapsed_ms).toBeGreaterThanOrEqual(finish?.ttft_ms ?? Number.POSITIVE_INFINITY);

    expect(server.requests).toHaveLength(1);
    const [sent] = server.requests;
    expect(sent?.method).toBe("POST");
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers["content-type"]).toBe("application/json");
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toEqual({
      model: "gpt-test",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Find cats and open a ticket.", name: "ada" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "mock_search", arguments: '{"q": "cats"}' },
            },
          ],
        },
        {
          role: "tool",
          content: '{"results":["Cat"]}',
          tool_call_id: "call_1",
          name: "mock_search",
        },
        { role: "user", content: "Thanks, now summarise." },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: searchTool }],
      tool_choice: { type: "function", function: { name: "mock_search" } },
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", schema: { type: "object" }, strict: true },
      },
      temperature: 0,
      max_tokens: 64,
      top_p: 0.9,
      seed: 3,
      stop: ["END"],
    });
  });

  it("sends no Authorization header when no key is configured (local endpoints)", async () => {
    server.enqueue(streamReply(completionStream({ text: ["ok"] })));
    const local = new OpenAIChatModel({ model: "llama3", base_url: server.baseUrl }, { env: {} });
    const { error } = await collectStream(local.stream(request));
    expect(error).toBeNull();
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("adds configured extra headers", async () => {
    server.enqueue(streamReply(completionStream({ text: ["ok"] })));
    await collectStream(model({ headers: { "X-Title": "agent-lab" } }).stream(request));
    expect(server.requests[0]?.headers["x-title"]).toBe("agent-lab");
  });

  it("assembles parallel tool calls streamed by index and interleaved", async () => {
    server.enqueue(
      streamReply(
        completionStream({
          toolCalls: [
            {
              index: 0,
              id: "call_a",
              type: "function",
              function: { name: "mock_search", arguments: "" },
            },
            {
              index: 1,
              id: "call_b",
              type: "function",
              function: { name: "mock_ticket", arguments: "" },
            },
            { index: 0, function: { arguments: '{"q":' } },
            { index: 1, function: { arguments: '{"title":' } },
            { index: 1, function: { arguments: '"Printer"}' } },
            { index: 0, function: { arguments: '"cats"}' } },
          ],
        }),
      ),
    );
    const { parts, error } = await collectStream(
      model().stream({ ...request, tools: [searchTool] }),
    );

    expect(error).toBeNull();
    expect(types(parts)).toEqual([
      "response-start",
      "first-token",
      ...Array<string>(6).fill("tool-call-delta"),
      "tool-call",
      "tool-call",
      "usage",
      "finish",
    ]);
    expect(ofType(parts, "tool-call-delta")).toEqual([
      { type: "tool-call-delta", index: 0, id: "call_a", name: "mock_search", arguments_delta: "" },
      { type: "tool-call-delta", index: 1, id: "call_b", name: "mock_ticket", arguments_delta: "" },
      { type: "tool-call-delta", index: 0, id: null, name: null, arguments_delta: '{"q":' },
      { type: "tool-call-delta", index: 1, id: null, name: null, arguments_delta: '{"title":' },
      { type: "tool-call-delta", index: 1, id: null, name: null, arguments_delta: '"Printer"}' },
      { type: "tool-call-delta", index: 0, id: null, name: null, arguments_delta: '"cats"}' },
    ]);
    expect(ofType(parts, "tool-call")).toEqual([
      {
        type: "tool-call",
        index: 0,
        id: "call_a",
        name: "mock_search",
        raw_arguments: '{"q":"cats"}',
      },
      {
        type: "tool-call",
        index: 1,
        id: "call_b",
        name: "mock_ticket",
        raw_arguments: '{"title":"Printer"}',
      },
    ]);
    expect(ofType(parts, "finish")[0]?.finish_reason).toBe("tool_calls");
  });

  it("counts usage with the tokenizer, marked estimated, when the endpoint reports none", async () => {
    server.enqueue(
      streamReply(
        completionStream({
          text: ["The quick brown fox ", "jumps over the lazy dog."],
          toolCalls: [
            { index: 0, id: "call_z", function: { name: "mock_search", arguments: '{"q":"fox"}' } },
          ],
          usage: null,
        }),
      ),
    );
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeNull();
    const [usage] = ofType(parts, "usage");
    const expectedPrompt = promptTokens(conversation).length;
    const expectedCompletion =
      countTokens("The quick brown fox jumps over the lazy dog.") + countTokens('{"q":"fox"}');
    expect(expectedPrompt).toBeGreaterThan(20);
    expect(expectedCompletion).toBeGreaterThan(10);
    expect(usage).toEqual({
      type: "usage",
      usage: {
        prompt_tokens: expectedPrompt,
        completion_tokens: expectedCompletion,
        total_tokens: expectedPrompt + expectedCompletion,
        cached_tokens: 0,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
      },
      estimated: true,
      source: "estimated",
      cost_usd: null,
      raw: null,
    });
  });

  it("keeps multi-byte UTF-8 characters intact when a write splits them", async () => {
    const event = Buffer.from(sseEvent(completionChunk({ content: "café 😀!" })));
    const eAcute = event.indexOf(Buffer.from("é"));
    const emoji = event.indexOf(Buffer.from("😀"));
    server.enqueue(
      streamReply([
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        event.subarray(0, eAcute + 1), // the first of é's two bytes
        { waitMs: 15 },
        event.subarray(eAcute + 1, emoji + 2), // half of 😀's four bytes
        { waitMs: 15 },
        event.subarray(emoji + 2),
        sseEvent(completionChunk({}, "stop")),
        SSE_DONE,
      ]),
    );
    const { parts, error } = await collectStream(model().stream(request));
    expect(error).toBeNull();
    expect(ofType(parts, "text-delta").map((part) => part.text)).toEqual(["café 😀!"]);
  });

  it("measures time to first token from the start of the attempt", async () => {
    const delay = 150;
    server.enqueue(
      streamReply([
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        { waitMs: delay },
        ...completionStream({ text: ["late"] }).slice(1),
      ]),
    );
    const started = performance.now();
    const { parts, error } = await collectStream(model().stream(request));
    const wall = performance.now() - started;
    expect(error).toBeNull();
    const ttft = ofType(parts, "first-token")[0]?.ttft_ms ?? -1;
    expect(ttft).toBeGreaterThanOrEqual(delay);
    // Within the call as this test timed it (a fixed margin, 40 ms, failed under a loaded
    // machine's suite): measured from no earlier point than the call's start.
    expect(ttft).toBeLessThanOrEqual(wall);
    expect(types(parts).indexOf("first-token")).toBe(types(parts).indexOf("text-delta") - 1);
  });

  it("leaves failed attempts and backoff out of time to first token, but not out of elapsed time", async () => {
    server.enqueue(
      { status: 503, headers: { "retry-after-ms": "120" } },
      streamReply(completionStream({ text: ["ok"] })),
    );
    const { parts, error } = await collectStream(model().stream(request));
    expect(error).toBeNull();
    const [finish] = ofType(parts, "finish");
    expect(finish?.attempts).toBe(2);
    expect(finish?.elapsed_ms).toBeGreaterThanOrEqual(120);
    // Timed within the second attempt, which began after the 120 ms wait: the call's own time
    // less (most of) that wait bounds it, not a fixed 100 ms that a loaded machine's local round
    // trip can overrun (as the test above overran 40 ms).
    expect(finish?.ttft_ms).toBeLessThan((finish?.elapsed_ms ?? 0) - 100);
    expect(ofType(parts, "response-start")[0]?.at_ms).toBeGreaterThanOrEqual(120);
  });

  it("gives the same parts however the server splits the same bytes", async () => {
    const bytes = Buffer.from(
      completionStream({
        text: ["Grüße ", "aus ", "Köln 🏰"],
        toolCalls: [
          { index: 0, id: "call_1", function: { name: "mock_search", arguments: '{"q":' } },
          { index: 0, function: { arguments: '"ä"}' } },
        ],
      }).join(""),
    );
    const castle = bytes.indexOf(Buffer.from("🏰")) + 4;
    // Pauses make the pieces arrive as separate reads, not one coalesced TCP segment.
    const splits: BodyStep[][] = [
      [bytes],
      // Byte by byte, pausing after each byte up to the castle emoji, so they arrive one by one.
      [...bytes].flatMap((byte, offset) =>
        offset <= castle ? [Buffer.from([byte]), { waitMs: 0 }] : [Buffer.from([byte])],
      ),
      chop(bytes, [7, 61, 62, 63, 200, 201, 333]).flatMap((piece) => [piece, { waitMs: 2 }]),
      chop(bytes, [3, 17, 91, 140, 141, 142, 143, 144]).flatMap((piece) => [piece, { waitMs: 2 }]),
    ];
    const runs: unknown[][] = [];
    for (const pieces of splits) {
      server.enqueue(streamReply(pieces));
      const { parts, error } = await collectStream(model().stream(request));
      expect(error).toBeNull();
      runs.push(withoutTiming(parts));
    }
    expect(ofType(runs[0] as ChatModelPart[], "text-delta").map((part) => part.text)).toEqual([
      "Grüße ",
      "aus ",
      "Köln 🏰",
    ]);
    for (const run of runs.slice(1)) expect(run).toEqual(runs[0]);
  });
});

describe("OpenAIChatModel: reasoning, capture and what is sent back", () => {
  it("estimates a thinking model's usage with its streamed reasoning inside the completion", async () => {
    server.enqueue(
      streamReply([
        sseEvent(
          completionChunk({
            role: "assistant",
            reasoning_content: "Let me think it over.",
          } as never),
        ),
        ...completionStream({ text: ["Fine."], usage: null }),
      ]),
    );
    const { parts, error } = await collectStream(model().stream(request));
    expect(error).toBeNull();
    const reasoning = countTokens("Let me think it over.");
    const [usage] = ofType(parts, "usage");
    expect(usage).toMatchObject({ estimated: true, source: "estimated", raw: null });
    expect(usage?.usage.reasoning_tokens).toBe(reasoning);
    expect(usage?.usage.completion_tokens).toBe(reasoning + countTokens("Fine."));
    // The reasoning came first, yet TTFT is the answer's: first-token sits just before the text.
    expect(types(parts).slice(0, 4)).toEqual([
      "response-start",
      "reasoning-delta",
      "first-token",
      "text-delta",
    ]);
  });

  it("sends reasoning back only when send_reasoning names the field", async () => {
    const history = [
      ...conversation.slice(0, 2),
      ChatMessage.parse({ ...conversation[2], reasoning: "Search first." }),
      ...conversation.slice(3),
    ];
    server.enqueue(streamReply(completionStream({ text: ["a"] })));
    server.enqueue(streamReply(completionStream({ text: ["b"] })));
    await collectStream(model().stream({ messages: history }));
    await collectStream(
      model({ send_reasoning: "reasoning_content" }).stream({ messages: history }),
    );
    const [plain, deepseek] = server.requests.map((sent) => sent.body as { messages: object[] });
    expect(plain?.messages[2]).not.toHaveProperty("reasoning_content");
    expect(deepseek?.messages[2]).toMatchObject({ reasoning_content: "Search first." });
  });

  it("captures the exact body once and every byte, and a failing capture does not fail the call", async () => {
    const body = completionStream({ text: ["Hi", " there"] });
    server.enqueue(streamReply(body), streamReply(body));
    const requests: string[] = [];
    const responses: Buffer[] = [];
    const { error } = await collectStream(
      model().stream(request, {
        capture: {
          request: (text) => requests.push(text),
          response: (chunk) => responses.push(Buffer.from(chunk)),
        },
      }),
    );
    expect(error).toBeNull();
    expect(requests).toEqual([server.requests[0]?.rawBody]);
    expect(requests[0]).not.toContain(KEY);
    expect(Buffer.concat(responses).toString("utf8")).toBe(body.join(""));

    const failing = await collectStream(
      model().stream(request, {
        capture: {
          request: () => {
            throw new Error("disk full");
          },
          response: () => {
            throw new Error("disk full");
          },
        },
      }),
    );
    expect(failing.error).toBeNull();
    expect(
      ofType(failing.parts, "text-delta")
        .map((part) => part.text)
        .join(""),
    ).toBe("Hi there");
  });

  it("stops reading and closes the connection when the consumer leaves early", async () => {
    server.enqueue(
      streamReply(completionStream({ text: ["one", "two"] }).slice(0, 2), { ending: "stall" }),
    );
    for await (const part of model().stream(request)) {
      if (part.type === "text-delta") break;
    }
    await server.requests[0]?.closed;
  });
});

/** Cuts `bytes` at the given offsets (those past the end are ignored). */
function chop(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let start = 0;
  for (const offset of offsets.filter((offset) => offset < bytes.length)) {
    pieces.push(bytes.subarray(start, offset));
    start = offset;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}
