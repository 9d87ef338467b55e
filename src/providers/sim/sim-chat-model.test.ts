import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../domain/errors.js";
import type { ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { renderRequestBody } from "../openai/request-body.js";
import { countTokens, promptTokens } from "../tokenizer.js";
import { SimChatModel } from "./sim-chat-model.js";
import {
  BUILTIN_DEFINITIONS,
  catalogPrompt,
  collect,
  eventTags,
  finishOf,
  message,
  partsOf,
  SEARCH_DEFINITION,
  system,
  TICKET_DEFINITION,
  textOf,
  usageOf,
  user,
  withoutTimings,
} from "./test-fixtures.js";

const run = (request: ChatModelRequest, model = new SimChatModel()) =>
  collect(model.stream(request));

const BOTH = "Search for vector databases (top 3) and file an urgent ticket about evaluating them";

describe("SimChatModel labels", () => {
  it("is labelled simulated, with the name it was constructed with", () => {
    const plain = new SimChatModel();
    expect([plain.provider, plain.model, plain.simulated]).toEqual(["sim", "sim", true]);
    expect(new SimChatModel({ name: "fast" }).model).toBe("sim:fast");
  });

  it("rejects bad settings with an error naming the field", () => {
    expect(() => new SimChatModel({ name: "has space" })).toThrow(/name/);
    expect(() => new SimChatModel({ options: { tokens_per_second: -1 } })).toThrow(
      InvalidInputError,
    );
  });
});

describe("SimChatModel streams", () => {
  it("gives the same parts for the same request, apart from timings", async () => {
    for (const request of [
      { messages: [system(), user(BOTH)], tools: BUILTIN_DEFINITIONS },
      { messages: [catalogPrompt(), user(BOTH)] },
      { messages: [system(), user("hello")] },
    ]) {
      const first = await run(request);
      const second = await run(request);
      expect(withoutTimings(second)).toEqual(withoutTimings(first));
    }
  });

  it("yields the port's parts in order, once each, never a retry", async () => {
    for (const request of [
      { messages: [system(), user(BOTH)], tools: BUILTIN_DEFINITIONS },
      { messages: [catalogPrompt(), user(BOTH)] },
    ]) {
      const parts = await run(request);
      const types = parts.map((part) => part.type);
      expect(types[0]).toBe("response-start");
      expect(types[1]).toBe("first-token");
      expect(types.slice(-2)).toEqual(["usage", "finish"]);
      expect(types).not.toContain("retry");
      const middle = types.slice(2, -2);
      const firstCall = middle.indexOf("tool-call");
      const deltas = firstCall === -1 ? middle : middle.slice(0, firstCall);
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.every((type) => type === "text-delta" || type === "tool-call-delta")).toBe(
        true,
      );
      if (firstCall !== -1)
        expect(new Set(middle.slice(firstCall))).toEqual(new Set(["tool-call"]));
      expect(parts[0]).toEqual({
        type: "response-start",
        attempt: 1,
        status: 200,
        request_id: null,
        at_ms: expect.any(Number),
      });
      expect(finishOf(parts)).toMatchObject({ attempts: 1, ttft_ms: expect.any(Number) });
    }
  });
});

describe("SimChatModel with native tools (chat_agent_tools)", () => {
  it("calls both tools in one reply, streaming the arguments in pieces", async () => {
    const parts = await run({ messages: [system(), user(BOTH)], tools: BUILTIN_DEFINITIONS });
    const calls = partsOf(parts, "tool-call");
    expect(calls.map(({ index, name }) => ({ index, name }))).toEqual([
      { index: 0, name: "mock_search" },
      { index: 1, name: "mock_ticket" },
    ]);
    expect(JSON.parse(calls[0]?.raw_arguments ?? "")).toEqual({
      query: "vector databases",
      limit: 3,
    });
    expect(JSON.parse(calls[1]?.raw_arguments ?? "")).toEqual({
      title: "evaluating them",
      priority: "high",
    });
    expect(calls[0]?.id).toMatch(/^call_[0-9a-f]{16}$/);
    expect(calls[1]?.id).not.toBe(calls[0]?.id);
    for (const call of calls) {
      const deltas = partsOf(parts, "tool-call-delta").filter(
        (delta) => delta.index === call.index,
      );
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.map((delta) => delta.arguments_delta).join("")).toBe(call.raw_arguments);
      expect(deltas[0]).toMatchObject({ id: call.id, name: call.name });
      expect(deltas.slice(1).every((delta) => delta.id === null && delta.name === null)).toBe(true);
    }
    expect(textOf(parts)).toBe("");
    expect(finishOf(parts).finish_reason).toBe("tool_calls");
  });

  it("answers small talk and arithmetic in text, without calling a tool", async () => {
    for (const [question, expected] of [
      ["what is 2+2", "4"],
      ["Hello!", "Hello"],
      ["Tell me a joke", "simulated"],
    ] as const) {
      const parts = await run({ messages: [system(), user(question)], tools: BUILTIN_DEFINITIONS });
      expect(partsOf(parts, "tool-call")).toEqual([]);
      expect(partsOf(parts, "tool-call-delta")).toEqual([]);
      expect(textOf(parts)).toContain(expected);
      expect(finishOf(parts).finish_reason).toBe("stop");
    }
  });

  it("only calls the tools the request offers", async () => {
    const onlySearch = await run({ messages: [system(), user(BOTH)], tools: [SEARCH_DEFINITION] });
    expect(partsOf(onlySearch, "tool-call").map((call) => call.name)).toEqual(["mock_search"]);
    expect(textOf(onlySearch)).toContain("no mock_ticket tool is available");

    const onlyTicket = await run({
      messages: [system(), user("search for cats")],
      tools: [TICKET_DEFINITION],
    });
    expect(partsOf(onlyTicket, "tool-call")).toEqual([]);
    expect(textOf(onlyTicket)).toContain('I would search for "cats"');

    const noTools = await run({ messages: [system(), user("search for cats")] });
    expect(partsOf(noTools, "tool-call")).toEqual([]);
    expect(textOf(noTools)).not.toContain("<event");
    expect(finishOf(noTools).finish_reason).toBe("stop");

    const turnedOff = await run({
      messages: [system(), user("search for cats")],
      tools: BUILTIN_DEFINITIONS,
      tool_choice: "none",
    });
    expect(partsOf(turnedOff, "tool-call")).toEqual([]);
    expect(textOf(turnedOff)).toContain("tool use is turned off");
  });

  it("calls a tool anyway when tool_choice is required", async () => {
    const parts = await run({
      messages: [system(), user("hello")],
      tools: [TICKET_DEFINITION],
      tool_choice: "required",
    });
    const calls = partsOf(parts, "tool-call");
    expect(calls.map((call) => call.name)).toEqual(["mock_ticket"]);
    expect(JSON.parse(calls[0]?.raw_arguments ?? "")).toEqual({ title: "hello" });
  });

  it("takes the intent from the newest user message of a multi-turn conversation", async () => {
    const history = [
      system(),
      user("search for cats"),
      message("assistant", "", {
        tool_calls: [
          {
            id: "call_1",
            name: "mock_search",
            arguments: { query: "cats" },
            raw_arguments: '{"query":"cats"}',
          },
        ],
      }),
      message("tool", '{"results":[{"id":"doc-1","title":"Cats"}]}', { tool_call_id: "call_1" }),
      message("assistant", 'mock_search found "Cats".'),
      user("Thanks. Now open a low priority ticket about adopting one"),
    ];
    const parts = await run({ messages: history, tools: BUILTIN_DEFINITIONS });
    const calls = partsOf(parts, "tool-call");
    expect(calls.map((call) => [call.name, JSON.parse(call.raw_arguments)])).toEqual([
      ["mock_ticket", { title: "adopting one", priority: "low" }],
    ]);
  });
});

describe("SimChatModel with an event catalog (dual_agent)", () => {
  it("writes event tags inside streamed text, split across deltas", async () => {
    const parts = await run({ messages: [catalogPrompt(), user(BOTH)] });
    const text = textOf(parts);
    expect(text).toMatch(/^Let me search for "vector databases"\. <event name="mock_search">/);
    expect(eventTags(text)).toEqual([
      { name: "mock_search", raw_arguments: '{"query":"vector databases","limit":3}' },
      { name: "mock_ticket", raw_arguments: '{"title":"evaluating them","priority":"high"}' },
    ]);
    const deltas = partsOf(parts, "text-delta").map((delta) => delta.text);
    expect(deltas.some((delta) => /<event name="[^"]*">[\s\S]*<\/event>/.test(delta))).toBe(false);
    expect(deltas.length).toBeGreaterThan(20);
    expect(partsOf(parts, "tool-call")).toEqual([]);
    expect(partsOf(parts, "tool-call-delta")).toEqual([]);
    expect(finishOf(parts).finish_reason).toBe("stop");
  });

  it("only requests the events the catalog offers, and answers plainly otherwise", async () => {
    const onlyTicket = await run({ messages: [catalogPrompt([TICKET_DEFINITION]), user(BOTH)] });
    expect(eventTags(textOf(onlyTicket)).map((tag) => tag.name)).toEqual(["mock_ticket"]);
    expect(textOf(onlyTicket)).toContain("no mock_search tool is available");

    const smallTalk = await run({ messages: [catalogPrompt(), user("what is 6 * 7?")] });
    expect(textOf(smallTalk)).toBe("6 * 7 = 42.");
  });
});

describe("SimChatModel usage", () => {
  it("counts prompt (with the tools) and completion with the real tokenizer", async () => {
    const messages = [system(), user(BOTH)];
    const native = await run({ messages, tools: BUILTIN_DEFINITIONS });
    const calls = partsOf(native, "tool-call");
    const completion = calls.reduce(
      (sum, call) => sum + countTokens(`${call.name}(${call.raw_arguments})`),
      0,
    );
    const prompt = promptTokens(messages, JSON.stringify(BUILTIN_DEFINITIONS)).length;
    expect(usageOf(native)).toEqual({
      type: "usage",
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        cached_tokens: 0,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
      },
      estimated: false,
      source: "endpoint",
      cost_usd: null,
      raw: null,
    });

    const events = await run({ messages: [catalogPrompt(), user(BOTH)] });
    expect(usageOf(events).usage.completion_tokens).toBe(countTokens(textOf(events)));
    expect(usageOf(events).usage.prompt_tokens).toBe(
      promptTokens([catalogPrompt(), user(BOTH)]).length,
    );
  });

  it("reports as cached the prompt prefix the conversation's previous request must have sent", async () => {
    const first = [system(), user("hello")];
    const second = [...first, message("assistant", "Hi!"), user("search for cats")];
    const cachedOf = async (messages: typeof first, extra: Partial<ChatModelRequest> = {}) =>
      usageOf(await run({ messages, tools: BUILTIN_DEFINITIONS, ...extra })).usage.cached_tokens;

    // No assistant message yet: the conversation's first request, cold.
    expect(await cachedOf(first)).toBe(0);
    // The request that answered "Hi!" sent `first`: its messages are the shared prefix.
    const tools = JSON.stringify(BUILTIN_DEFINITIONS);
    const shared = promptTokens(first).length - promptTokens([]).length;
    const cached = await cachedOf(second);
    expect(cached).toBeGreaterThanOrEqual(shared);
    expect(cached).toBeLessThan(promptTokens(second, tools).length);
    // A pure function of the request: a fresh instance, another conversation id, any order.
    expect(await cachedOf(second, { conversation_id: "b" })).toBe(cached);
    const model = new SimChatModel();
    await collect(model.stream({ messages: [user("unrelated")] }));
    expect(
      usageOf(await run({ messages: second, tools: BUILTIN_DEFINITIONS }, model)).usage
        .cached_tokens,
    ).toBe(cached);
  });

  it("stops at max_tokens with finish reason length", async () => {
    const parts = await run({ messages: [system(), user("Tell me a long story")], max_tokens: 5 });
    expect(usageOf(parts).usage.completion_tokens).toBe(5);
    expect(finishOf(parts).finish_reason).toBe("length");
    expect(countTokens(textOf(parts))).toBeLessThanOrEqual(5);
  });
});

describe("SimChatModel reasoning (option `reasoning`)", () => {
  const thinking = new SimChatModel({ options: { reasoning: true } });

  it("streams a short thinking text first, counted as reasoning tokens inside the completion", async () => {
    const request = { messages: [system(), user(BOTH)], tools: BUILTIN_DEFINITIONS };
    const parts = await run(request, thinking);
    const reasoning = partsOf(parts, "reasoning-delta")
      .map((part) => part.text)
      .join("");
    expect(reasoning).toBe(
      "The request needs mock_search and mock_ticket. I will call them first, then answer from the results.",
    );
    const firstOutput = parts.findIndex((part) => part.type.endsWith("-delta"));
    expect(parts[firstOutput]?.type).toBe("reasoning-delta");
    const plain = await run(request);
    // The answer itself is the one the model gives without reasoning, delta for delta.
    expect(partsOf(parts, "tool-call")).toEqual(partsOf(plain, "tool-call"));
    expect(partsOf(parts, "tool-call-delta")).toEqual(partsOf(plain, "tool-call-delta"));
    const { usage } = usageOf(parts);
    expect(usage.reasoning_tokens).toBe(countTokens(reasoning));
    expect(usage.completion_tokens).toBe(
      usageOf(plain).usage.completion_tokens + usage.reasoning_tokens,
    );
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("never puts the reasoning in the text, and says it answers directly when no tool is needed", async () => {
    const parts = await run({ messages: [system(), user("hello")] }, thinking);
    expect(
      partsOf(parts, "reasoning-delta")
        .map((part) => part.text)
        .join(""),
    ).toBe("I have what I need to answer directly, without a tool.");
    expect(textOf(parts)).toBe(textOf(await run({ messages: [system(), user("hello")] })));
  });
});

describe("SimChatModel capture", () => {
  /** A CallCapture that keeps everything, as text. */
  function recorder() {
    const kept = { request: [] as string[], response: "" };
    return {
      kept,
      capture: {
        request: (body: string) => kept.request.push(body),
        response: (chunk: Uint8Array | string) => {
          kept.response += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
        },
      },
    };
  }
  const sseData = (text: string) =>
    text
      .split("\n\n")
      .filter(Boolean)
      .map((event) => event.replace(/^data: /, ""));

  it("renders the request as the Chat Completions body the openai adapter would send", async () => {
    const { kept, capture } = recorder();
    const request = {
      messages: [system(), user(BOTH)],
      tools: BUILTIN_DEFINITIONS,
      temperature: 0,
    };
    await collect(new SimChatModel().stream(request, { capture }));
    expect(kept.request).toHaveLength(1);
    expect(JSON.parse(kept.request[0] ?? "")).toEqual(renderRequestBody("sim", request));
  });

  it("renders the response as the SSE stream of the same parts, dual_agent's event tags included", async () => {
    const { kept, capture } = recorder();
    const request = { messages: [catalogPrompt(), user(BOTH)] };
    const parts = await collect(
      new SimChatModel({ options: { reasoning: true } }).stream(request, { capture }),
    );
    const events = sseData(kept.response);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data));
    const finish = finishOf(parts);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: finish.response_id, model: "sim", created: 0 });
    }
    const deltas = chunks.flatMap((chunk) =>
      chunk.choices.map((choice: { delta: object }) => choice.delta),
    );
    const content = deltas.map((delta: { content?: string }) => delta.content ?? "").join("");
    expect(content).toBe(textOf(parts));
    expect(content).toContain('<event name="mock_search">');
    const reasoning = deltas
      .map((delta: { reasoning_content?: string }) => delta.reasoning_content ?? "")
      .join("");
    expect(reasoning).toBe(
      partsOf(parts, "reasoning-delta")
        .map((part) => part.text)
        .join(""),
    );
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    const usage = usageOf(parts).usage;
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
      },
    });
  });

  it("renders native tool calls as tool_calls deltas that rebuild the same calls", async () => {
    const { kept, capture } = recorder();
    const parts = await collect(
      new SimChatModel().stream(
        { messages: [system(), user(BOTH)], tools: BUILTIN_DEFINITIONS },
        { capture },
      ),
    );
    const rebuilt = new Map<number, { id?: string; name?: string; arguments: string }>();
    for (const data of sseData(kept.response).slice(0, -1)) {
      for (const choice of JSON.parse(data).choices) {
        for (const call of choice.delta.tool_calls ?? []) {
          const entry = rebuilt.get(call.index) ?? { arguments: "" };
          if (call.id) entry.id = call.id;
          if (call.function.name) entry.name = call.function.name;
          entry.arguments += call.function.arguments;
          rebuilt.set(call.index, entry);
        }
      }
    }
    expect([...rebuilt.values()]).toEqual(
      partsOf(parts, "tool-call").map((call) => ({
        id: call.id,
        name: call.name,
        arguments: call.raw_arguments,
      })),
    );
  });

  it("names itself as the responding model, with a response id fixed by the request", async () => {
    const request = { messages: [system(), user("hello")] };
    const finish = finishOf(await run(request, new SimChatModel({ name: "fast" })));
    expect(finish.response_model).toBe("sim:fast");
    expect(finish.response_id).toMatch(/^chatcmpl-sim-[0-9a-f]{16}$/);
    expect(finishOf(await run(request)).response_id).toBe(finish.response_id);
  });

  it("a cancelled stream's capture holds what streamed before the cut, and no [DONE]", async () => {
    const { kept, capture } = recorder();
    const controller = new AbortController();
    const slow = new SimChatModel({ options: { tokens_per_second: 200 } });
    const seen: ChatModelPart[] = [];
    await expect(
      (async () => {
        for await (const part of slow.stream(
          { messages: [system(), user("Tell me a long story")] },
          { capture, signal: controller.signal },
        )) {
          seen.push(part);
          if (part.type === "text-delta") controller.abort(new Error("stop"));
        }
      })(),
    ).rejects.toThrow();
    expect(kept.response).toContain('"content":');
    expect(kept.response).not.toContain("[DONE]");
  });
});
