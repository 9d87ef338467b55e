import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  completionChunk,
  completionStream,
  errorReply,
  FakeOpenAIServer,
  SSE_DONE,
  sseEvent,
  streamReply,
} from "../../test/fake-openai-server.js";
import { LabConfigFile } from "../domain/tool-sources.js";
import { SLOW_SIM_CONFIG, startTestServer, type TestServer, waitFor } from "./test-fixtures.js";

/**
 * The gateway in front of a real OpenAI-compatible endpoint (a scripted one on 127.0.0.1): bytes
 * passed through unchanged, the client's own request sent upstream, dual_agent repairing what the
 * chat agent wrote, and the upstream's failures as the client sees them.
 */

const UPSTREAM_KEY = "sk-upstream-secret-0123456789abcdef";
let upstream: FakeOpenAIServer;
let server: TestServer;
let token: string;

beforeEach(async () => {
  upstream = await FakeOpenAIServer.start();
  const labConfig = LabConfigFile.parse({
    upstreams: {
      fake: {
        base_url: upstream.baseUrl,
        model: "fake-model",
        api_key_env: "FAKE_UPSTREAM_KEY",
        options: { max_retries: 0 },
      },
      stalling: {
        base_url: upstream.baseUrl,
        model: "fake-model",
        api_key_env: "FAKE_UPSTREAM_KEY",
        options: { max_retries: 0, idle_timeout_ms: 300 },
      },
      silent: {
        base_url: upstream.baseUrl,
        model: "fake-model",
        api_key_env: "FAKE_UPSTREAM_KEY",
        options: { max_retries: 0, timeout_ms: 300 },
      },
      repairing: {
        base_url: upstream.baseUrl,
        model: "fake-model",
        api_key_env: "FAKE_UPSTREAM_KEY",
        mode: "dual_agent",
        options: { max_retries: 0 },
      },
      // As a user writes one: no adapter options.
      plain: { base_url: upstream.baseUrl, model: "fake-model", api_key_env: "FAKE_UPSTREAM_KEY" },
    },
  });
  server = await startTestServer({
    runTurnDefaults: { labConfig, env: { ...process.env, FAKE_UPSTREAM_KEY: UPSTREAM_KEY } },
  });
  token = server.server.token as string;
});
afterEach(async () => {
  await server.close();
  await upstream.close();
});

const chatUrl = () => new URL("/v1/chat/completions", server.url).href;
const client = () =>
  new OpenAI({ baseURL: new URL("/v1", server.url).href, apiKey: token, maxRetries: 0 });

const WEATHER = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};

/** A promise the test settles: an upstream answer held at `{ until: opened }` until `open()`. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A raw request to the gateway, with the token. */
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(chatUrl(), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

/** A streamed answer that is one tool call, as the upstream writes it. */
const toolCallReply = (id: string, name: string, args: string) =>
  streamReply(
    completionStream({
      toolCalls: [{ index: 0, id, type: "function", function: { name, arguments: args } }],
    }),
  );

/** A streamed answer of two weather calls, Rome's and Oslo's, under these ids. */
const romeAndOsloReply = (rome: string, oslo: string) =>
  streamReply(
    completionStream({
      toolCalls: [rome, oslo].map((id, index) => ({
        index,
        id,
        type: "function",
        function: { name: "get_weather", arguments: `{"city":"${index === 0 ? "Rome" : "Oslo"}"}` },
      })),
    }),
  );

/** A refusal's status and OpenAI-shaped error body, for one assertion on both. */
async function refusalOf(response: Response): Promise<{
  status: number;
  code: string | null;
  message: string;
  type: string;
}> {
  const { error } = (await response.json()) as {
    error: { code: string | null; message: string; type: string };
  };
  return { status: response.status, code: error.code, message: error.message, type: error.type };
}

function onlySession() {
  const [item] = server.store.listSessions();
  return server.store.getSession(item?.id as string);
}

/**
 * "Weather in Rome?" answered upstream with one get_weather call (`call_w1`); the upstream's next
 * answer is `then`.
 */
async function romeWeatherCall(openai: OpenAI, then: string) {
  upstream.enqueue(
    toolCallReply("call_w1", "get_weather", '{"city":"Rome"}'),
    streamReply(completionStream({ text: [then] })),
  );
  const first = await openai.chat.completions.create({
    model: "fake",
    messages: [{ role: "user", content: "Weather in Rome?" }],
    tools: [WEATHER],
  });
  return { first, call: first.choices[0]?.message.tool_calls?.[0] };
}

describe("pass-through", () => {
  it("streams two sessions at once, interleaved: each client gets only its own upstream's bytes, each session records its own answer", async () => {
    const replies = ["alpha", "beta"].map((word) => {
      const [role, ...rest] = completionStream({ text: [word, ` ${word}`, ` ${word}!`] });
      // Each answer pauses after its first bytes, so the two streams overlap.
      return [role as string, rest[0] as string, { waitMs: 150 }, ...rest.slice(1)];
    });
    for (const reply of replies) upstream.enqueue(streamReply(reply));
    const texts = await Promise.all(
      ["one", "two"].map(async (name) => {
        const response = await post(
          {
            model: "fake",
            messages: [{ role: "user", content: `hi ${name}` }],
            stream: true,
            // Usage asked for: the bytes come through unfiltered.
            stream_options: { include_usage: true },
          },
          { "X-Agent-Lab-Session": `parallel-${name}` },
        );
        expect(response.status).toBe(200);
        return { name, text: await response.text() };
      }),
    );
    const expected = replies.map((reply) =>
      reply.filter((step): step is string => typeof step === "string").join(""),
    );
    // Which request met which reply is the upstream's order; each got one of them whole.
    expect(texts.map((entry) => entry.text).sort()).toEqual([...expected].sort());
    for (const { name, text } of texts) {
      const answer = text.includes("alpha") ? "alpha alpha alpha!" : "beta beta beta!";
      const session = server.store
        .listSessions()
        .map((item) => server.store.getSession(item.id))
        .find((found) => found?.title === `hi ${name}`);
      const id = session?.id as string;
      await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
      expect(server.store.listMessages(id).map((message) => message.content)).toEqual([
        `hi ${name}`,
        answer,
      ]);
    }
  });

  it("streams the upstream's bytes unchanged and sends the client's own request, with the lab's key", async () => {
    const events = completionStream({ text: ["Hel", "lo", " there"] });
    upstream.enqueue(streamReply(events));
    const body = {
      model: "fake",
      messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }], name: "ann" }],
      stream: true,
      stream_options: { include_usage: true },
      seed: 7,
      response_format: { type: "text" },
    };
    const response = await fetch(chatUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(await response.text()).toBe(events.join(""));

    const sent = upstream.requests[0];
    expect(sent?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent?.body).toEqual({ ...body, model: "fake-model" });

    // The client had its answer before the lab recorded it: the records follow the bytes.
    await waitFor(() => server.store.listSessions().length === 1);
    const session = onlySession();
    const id = session?.id as string;
    expect(session?.config).toMatchObject({ gateway: { upstream: "fake" } });
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    expect(server.store.listMessages(id).map((message) => message.content)).toEqual([
      "Say hello",
      "Hello there",
    ]);
    const [call] = server.store.usageSummary(id).calls;
    expect(call).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, metric_key: "chat:1:1" });
    expect(call?.ttft_ms).not.toBeNull();
    // Nothing of the key is kept anywhere the lab writes.
    expect(JSON.stringify(server.store.exportSession(id))).not.toContain(UPSTREAM_KEY);
  });

  it("sends a user message that is only an image as it is, and records the turn by its parts' kinds", async () => {
    upstream.enqueue(streamReply(completionStream({ text: ["A red square."] })));
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };
    const response = await post({ model: "fake", messages: [{ role: "user", content: [image] }] });
    expect(response.status).toBe(200);
    expect(upstream.requests[0]?.body).toMatchObject({
      messages: [{ role: "user", content: [image] }],
    });
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    expect(server.store.listMessages(id).map((message) => message.content)).toEqual([
      "[image_url]",
      "A red square.",
    ]);
    // Nothing at all is still refused, naming the field.
    const empty = await post({ model: "fake", messages: [{ role: "user", content: [] }] });
    expect(await refusalOf(empty)).toMatchObject({
      status: 400,
      message: expect.stringContaining("messages.0.content: the last user message is empty"),
    });
  });

  it("drops only the usage event the lab asked for when the client did not", async () => {
    const events = completionStream({ text: ["Hi"] });
    upstream.enqueue(streamReply(events));
    const response = await fetch(chatUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "fake",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    });
    const usageEvent = events.find((event) => event.includes('"usage"')) as string;
    expect(await response.text()).toBe(events.filter((event) => event !== usageEvent).join(""));
    expect(upstream.requests[0]?.body).toMatchObject({ stream_options: { include_usage: true } });
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.usageSummary(id).calls.length === 1);
    expect(server.store.usageSummary(id).calls[0]?.prompt_tokens).toBe(10);
  });

  it("a fast upstream's whole answer in one read reaches the client byte for byte (the usage event dropped), with the lab's own headers", async () => {
    // One write of 400 events: the lab's first read holds many of them and is sent in two parts.
    const events = completionStream({
      text: Array.from({ length: 400 }, (_, index) => `w${index} `),
    });
    upstream.enqueue(streamReply([events.join("")]));
    const response = await post({
      model: "fake",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    // Written past Hono, the stream still carries what the lab's middleware puts on every response.
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const usageEvent = events.find((event) => event.includes('"usage"')) as string;
    const expected = events.filter((event) => event !== usageEvent).join("");
    expect(expected.length).toBeGreaterThan(8 * 1024);
    expect(await response.text()).toBe(expected);
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    expect(server.store.listMessages(id)[1]?.content).toBe(
      Array.from({ length: 400 }, (_, index) => `w${index} `).join(""),
    );
  });

  it("a pass-through turn's wall time holds its call, which started before the runtime was asked", async () => {
    const [role, ...rest] = completionStream({ text: ["Slow", " answer"] });
    upstream.enqueue(streamReply([role as string, { waitMs: 120 }, ...rest]));
    await client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "take your time" }],
    });
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    const [turn] = server.store.listTurns(id);
    const [call] = server.store.usageSummary(id).calls;
    expect(call?.elapsed_ms).toBeGreaterThanOrEqual(120);
    expect(turn?.wall_time_ms).toBeGreaterThanOrEqual(call?.elapsed_ms as number);
  });

  it("passes tool calls through as the model wrote them, and the reply request goes upstream as sent", async () => {
    const openai = client();
    const { first, call } = await romeWeatherCall(openai, "It is sunny in Rome.");
    // The model that served it, as the upstream's chunks name it (a streaming client sees the same).
    expect(first.model).toBe("fake-model");
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call).toMatchObject({
      id: "call_w1",
      function: { name: "get_weather", arguments: '{"city":"Rome"}' },
    });
    const followUp = {
      model: "fake",
      messages: [
        { role: "user" as const, content: "Weather in Rome?" },
        { role: "assistant" as const, content: null, tool_calls: [call as never] },
        { role: "tool" as const, tool_call_id: "call_w1", content: "sunny, 24 C" },
      ],
      tools: [WEATHER],
    };
    const second = await openai.chat.completions.create(followUp);
    expect(second.choices[0]?.message.content).toBe("It is sunny in Rome.");
    expect(upstream.requests[1]?.body).toMatchObject({
      messages: followUp.messages,
      model: "fake-model",
    });
    const id = onlySession()?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["completed"]);
    expect(server.store.listMessages(id).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
  });
});

describe("pass-through, a client that answers its calls and goes on in one request", () => {
  it("records its replies as the calls' results, ends that turn, and sends the request upstream as the next turn's", async () => {
    const openai = client();
    const { call } = await romeWeatherCall(openai, "Glad it is sunny.");
    const next = {
      model: "fake",
      messages: [
        { role: "user" as const, content: "Weather in Rome?" },
        { role: "assistant" as const, content: null, tool_calls: [call as never] },
        { role: "tool" as const, tool_call_id: "call_w1", content: "sunny, 24 C" },
        { role: "user" as const, content: "Say something nice about it." },
      ],
      tools: [WEATHER],
    };
    const second = await openai.chat.completions.create(next);
    expect(second.choices[0]?.message.content).toBe("Glad it is sunny.");
    // Two upstream calls in all: the ended turn made none of its own.
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[1]?.body).toMatchObject({ messages: next.messages });
    const id = onlySession()?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual([
      "cancelled",
      "completed",
    ]);
    expect(
      server.store.listMessages(id).map((message) => [message.turn_index, message.content]),
    ).toEqual([
      [1, "Weather in Rome?"],
      [1, ""],
      [1, "sunny, 24 C"],
      [2, "Say something nice about it."],
      [2, "Glad it is sunny."],
    ]);
  });
});

describe("pass-through, replies to calls of no turn in a session whose turn waits for others", () => {
  it("are refused (409), and that turn still waits for its own", async () => {
    const openai = client();
    const headers = { "X-Agent-Lab-Session": "busy-one" };
    upstream.enqueue(toolCallReply("call_live", "get_weather", '{"city":"Rome"}'));
    await openai.chat.completions.create(
      {
        model: "fake",
        messages: [{ role: "user", content: "Weather in Rome?" }],
        tools: [WEATHER],
      },
      { headers },
    );
    const stale = openai.chat.completions.create(
      {
        model: "fake",
        messages: [
          { role: "user", content: "Weather in Rome?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_old",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Rome"}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_old", content: "an old answer" },
        ],
        tools: [WEATHER],
      },
      { headers },
    );
    await expect(stale).rejects.toMatchObject({ status: 409, code: "no_waiting_turn" });
    expect(upstream.requests).toHaveLength(1);
    expect(server.store.listTurns("busy-one").map((turn) => turn.status)).toEqual(["running"]);
  });
});

describe("dual_agent through the gateway", () => {
  it("repairs the chat agent's broken arguments with the event agent: the client gets valid ones", async () => {
    // The chat agent writes an event whose arguments miss the required city.
    upstream.enqueue(
      streamReply([
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        sseEvent(
          completionChunk({ content: 'Checking. <event name="get_weather">{"town": "Paris"}' }),
        ),
        sseEvent(completionChunk({ content: "</event>" })),
        sseEvent(completionChunk({}, "stop")),
        SSE_DONE,
      ]),
      // The event agent (the same upstream) writes the arguments the schema wants.
      streamReply(completionStream({ text: ['{"city": "Paris"}'] })),
      streamReply(completionStream({ text: ["Paris is mild today."] })),
    );
    const openai = client();
    const first = await openai.chat.completions.create({
      model: "repairing",
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      tools: [WEATHER],
    });
    const message = first.choices[0]?.message;
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(message?.content ?? "").not.toContain("<event");
    const call = message?.tool_calls?.[0] as
      | { id: string; function: { name: string; arguments: string } }
      | undefined;
    expect(call?.function.name).toBe("get_weather");
    expect(JSON.parse(call?.function.arguments ?? "{}")).toEqual({ city: "Paris" });
    // The chat agent got the event catalog, not native tools; the event agent a JSON schema.
    expect(upstream.requests[0]?.body).not.toHaveProperty("tools");
    expect(JSON.stringify(upstream.requests[0]?.body)).toContain("get_weather");
    expect(upstream.requests[1]?.body).toMatchObject({
      response_format: { type: "json_schema" },
    });

    const second = await openai.chat.completions.create({
      model: "repairing",
      messages: [
        { role: "user", content: "What is the weather in Paris?" },
        { role: "assistant", content: message?.content ?? null, tool_calls: [call as never] },
        { role: "tool", tool_call_id: call?.id as string, content: "mild, 18 C" },
      ],
      tools: [WEATHER],
    });
    expect(second.choices[0]?.message.content).toBe("Paris is mild today.");
    const id = onlySession()?.id as string;
    expect(onlySession()?.config).toMatchObject({ tool_invocation_mode: "dual_agent" });
    const calls = server.store.usageSummary(id).calls;
    expect(calls.filter((row) => row.call_kind === "argument_fallback")).toHaveLength(1);
    expect(calls.find((row) => row.call_kind === "tool_execution")).toMatchObject({
      used_fallback: true,
    });
  });
});

describe("dual_agent through the gateway, a call beyond repair", () => {
  /** The chat agent's bad call, the event agent's bad repair, then the chat agent's answer. */
  const beyondRepair = () =>
    upstream.enqueue(
      streamReply([
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        sseEvent(completionChunk({ content: 'One moment.<event name="get_weather">' })),
        sseEvent(completionChunk({ content: '{"town": "Paris"}</event>' })),
        sseEvent(completionChunk({}, "stop")),
        SSE_DONE,
      ]),
      streamReply(completionStream({ text: ['{"town": "Paris"}'] })),
      streamReply(completionStream({ text: ["Hello, I could not check the weather."] })),
    );
  const ask = {
    model: "repairing",
    messages: [{ role: "user", content: "What is the weather in Paris?" }],
    tools: [WEATHER],
  };

  it("is answered by the lab, the chat agent goes on, and the client reads each round's text apart", async () => {
    beyondRepair();
    const answer = await client().chat.completions.create(ask as never);
    expect(answer.choices[0]?.finish_reason).toBe("stop");
    expect(answer.choices[0]?.message.tool_calls ?? []).toEqual([]);
    expect(answer.choices[0]?.message.content).toBe(
      "One moment.\n\nHello, I could not check the weather.",
    );
    // The session shows what happened: the repair failed, the call was answered with the error.
    const id = onlySession()?.id as string;
    const fallbackEnd = server.store.listAuditLogs(id).find((row) => row.event === "fallback_end");
    expect(fallbackEnd?.details).toMatchObject({ ok: false });
    const calls = server.store.usageSummary(id).calls;
    expect(calls.filter((row) => row.call_kind === "argument_fallback")).toHaveLength(1);
    const reply = server.store.listMessages(id).find((message) => message.role === "tool");
    expect(reply?.content).toContain("the event agent's arguments were refused too");
    // The conversation goes on from the answer as the client read it: the same session.
    upstream.enqueue(streamReply(completionStream({ text: ["You are welcome."] })));
    const content = answer.choices[0]?.message.content ?? "";
    await client().chat.completions.create({
      ...ask,
      messages: [
        ...ask.messages,
        { role: "assistant", content },
        { role: "user", content: "Thanks" },
      ],
    } as never);
    expect(server.store.listSessions()).toHaveLength(1);
    expect(server.store.listTurns(id)).toHaveLength(2);

    beyondRepair();
    const streamed = await client().chat.completions.create({ ...ask, stream: true } as never);
    let text = "";
    for await (const chunk of streamed as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe("One moment.\n\nHello, I could not check the weather.");
  });
});

describe("upstream faults as the client sees them", () => {
  it("a 500 stays a 500 for the client (its own retries decide), recorded as a failed turn", async () => {
    upstream.enqueue(errorReply(500, "upstream exploded", { "x-should-retry": "false" }));
    const failure = await client()
      .chat.completions.create({ model: "fake", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect(String((failure as Error).message)).toContain("upstream exploded");
    const id = onlySession()?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["failed"]);
    // The upstream's failure, answered as such: not logged as one of the lab's own.
    expect(server.logs.join("\n")).not.toContain("unexpected failure");
  });

  it("the lab makes one attempt per call: a client that retries twice costs the upstream three calls, not nine, each after the wait the upstream asked for", async () => {
    const busy = () => errorReply(503, "busy", { "retry-after-ms": "30" });
    upstream.enqueue(busy(), busy(), busy());
    const retrying = new OpenAI({
      baseURL: new URL("/v1", server.url).href,
      apiKey: token,
      maxRetries: 2,
    });
    const started = performance.now();
    const failure = await retrying.chat.completions
      .create({ model: "plain", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(upstream.requests).toHaveLength(3);
    // The client waited what the upstream asked (30 ms twice), not its own backoff (0.5 s, then
    // 1 s, less up to a quarter of jitter: 1.125 s at the least).
    expect(performance.now() - started).toBeLessThan(1_000);
    // The session's config is the upstream's as written: the one attempt is the adapter's only.
    expect(onlySession()?.config).toMatchObject({ chat_agent: { options: {} } });
    expect(onlySession()?.config.chat_agent).not.toHaveProperty("options.max_retries");

    // The upstream's word on retrying reaches the client as the upstream gave it, however long.
    upstream.enqueue(
      errorReply(429, "slow down", { "retry-after": "3600", "x-should-retry": "true" }),
    );
    const limited = await post({ model: "plain", messages: [{ role: "user", content: "hi" }] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3600");
    expect(limited.headers.get("retry-after-ms")).toBe("3600000");
    expect(limited.headers.get("x-should-retry")).toBe("true");
    upstream.enqueue(errorReply(500, "broken for good", { "x-should-retry": "false" }));
    const broken = await post({ model: "plain", messages: [{ role: "user", content: "hi" }] });
    expect(broken.status).toBe(500);
    expect(broken.headers.get("x-should-retry")).toBe("false");
    expect(broken.headers.get("retry-after")).toBeNull();
    expect(upstream.requests).toHaveLength(5);
  });

  it("the AI SDK's retries, which do not say they are, go on in the failed attempt's session as its next turns", async () => {
    const limited = () => errorReply(429, "slow down", { "retry-after-ms": "20" });
    upstream.enqueue(
      limited(),
      limited(),
      streamReply(completionStream({ text: ["Hello after all."] })),
    );
    const lab = createOpenAICompatible({
      name: "lab",
      baseURL: new URL("/v1", server.url).href,
      apiKey: token,
    });
    const result = await generateText({ model: lab("plain"), prompt: "hi, are you there?" });
    expect(result.text).toBe("Hello after all.");
    expect(upstream.requests).toHaveLength(3);
    // One client call, one session: each attempt a turn of it (before, a session each).
    const id = onlySession()?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual([
      "failed",
      "failed",
      "completed",
    ]);
    // A new request after the answer is no retry: a session of its own, as before.
    upstream.enqueue(streamReply(completionStream({ text: ["Hi again."] })));
    await generateText({ model: lab("plain"), prompt: "hi, are you there?" });
    expect(server.store.listSessions()).toHaveLength(2);
  });

  it("another client's identical request, or a failure no client retries, is no retry: a session of its own", async () => {
    const body = { model: "plain", messages: [{ role: "user", content: "the same prompt" }] };
    upstream.enqueue(errorReply(429, "slow down", { "retry-after-ms": "20" }));
    const first = await post(body, { "user-agent": "agent-a/1.0" });
    expect(first.status).toBe(429);
    // Another client (another user agent) with the very same body, a moment later.
    upstream.enqueue(streamReply(completionStream({ text: ["For B."] })));
    const other = await post(body, { "user-agent": "agent-b/1.0" });
    expect(other.status).toBe(200);
    expect(server.store.listSessions()).toHaveLength(2);
    // openai-node says how it retries (a count, even 0): its request is never taken for one.
    upstream.enqueue(streamReply(completionStream({ text: ["For node."] })));
    const said = await post(body, { "user-agent": "agent-a/1.0", "x-stainless-retry-count": "0" });
    expect(said.status).toBe(200);
    expect(server.store.listSessions()).toHaveLength(3);
    // A 400 is not retried by any client: the same body again is a new conversation.
    upstream.enqueue(errorReply(400, "bad request"));
    const refused = { model: "plain", messages: [{ role: "user", content: "refused prompt" }] };
    expect((await post(refused, { "user-agent": "agent-a/1.0" })).status).toBe(400);
    upstream.enqueue(streamReply(completionStream({ text: ["Now fine."] })));
    expect((await post(refused, { "user-agent": "agent-a/1.0" })).status).toBe(200);
    expect(server.store.listSessions()).toHaveLength(5);
  });

  it("a retry inferred from its body is never refused: asked in another mode, or its session busy, it gets a session of its own", async () => {
    const agent = { "user-agent": "agent-a/1.0" };
    const turnsOf = (id: string) => server.store.listTurns(id).map((turn) => turn.status);
    /** A request that fails as the AI SDK retries, and the session it failed in. */
    const failing = async (content: string) => {
      const before = new Set(server.store.listSessions().map((session) => session.id));
      const body = { model: "plain", messages: [{ role: "user", content }] };
      upstream.enqueue(errorReply(429, "slow down", { "retry-after-ms": "20" }));
      expect((await post(body, agent)).status).toBe(429);
      const [id] = server.store.listSessions().filter((session) => !before.has(session.id));
      return { body, id: id?.id as string };
    };
    const answered = async (body: unknown, headers: Record<string, string>, text: string) => {
      upstream.enqueue(streamReply(completionStream({ text: [text] })));
      const response = await post(body, headers);
      expect(response.status).toBe(200);
      await response.text();
    };

    // The same body from the same client, in another mode: a named session would refuse the
    // mode; a guessed one must not.
    const moded = await failing("a prompt that failed");
    await answered(moded.body, { ...agent, "X-Agent-Lab-Mode": "dual_agent" }, "In dual_agent.");
    expect(server.store.listSessions()).toHaveLength(2);
    expect(turnsOf(moded.id)).toEqual(["failed"]);

    // A failed session that, named, has a turn waiting for the client's tool replies since.
    const busy = await failing("another prompt that failed");
    upstream.enqueue(toolCallReply("call_busy", "get_weather", '{"city":"Rome"}'));
    const waiting = await post(
      {
        model: "plain",
        messages: [{ role: "user", content: "weather in Rome?" }],
        tools: [WEATHER],
      },
      { ...agent, "X-Agent-Lab-Session": busy.id },
    );
    expect(waiting.status).toBe(200);
    await waiting.text();
    expect(turnsOf(busy.id)).toEqual(["failed", "running"]);
    // The failed body again: taken into that session, it would end the waiting turn.
    await answered(busy.body, agent, "On its own.");
    expect(server.store.listSessions()).toHaveLength(4);
    expect(turnsOf(busy.id)).toEqual(["failed", "running"]);

    // A failed session a turn of the lab's own API holds (its model call not answered yet).
    const held = await failing("a third prompt that failed");
    upstream.enqueue({ kind: "hang" });
    const stop = new AbortController();
    // Counted before: the turn may reach its model call before the response's head arrives.
    const asked = upstream.requests.length;
    const apiTurn = await fetch(new URL(`/api/sessions/${held.id}/turns`, server.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "asked on the lab's page" }),
      signal: stop.signal,
    });
    expect(apiTurn.status).toBe(200);
    await waitFor(() => upstream.requests.length === asked + 1);
    expect(turnsOf(held.id)).toEqual(["failed", "running"]);
    // Taken into that session, it would be refused as a turn in progress (a 409).
    await answered(held.body, agent, "Beside the page's turn.");
    expect(server.store.listSessions()).toHaveLength(6);
    expect(turnsOf(held.id)).toEqual(["failed", "running"]);
    stop.abort();
    await waitFor(() => turnsOf(held.id)[1] === "cancelled");
  });

  it("dual_agent keeps the adapter's retries: its request is several calls, which a client's retry would run again", async () => {
    upstream.enqueue(
      errorReply(503, "busy", { "retry-after-ms": "10" }),
      streamReply(completionStream({ text: ["Hello there."] })),
    );
    const answer = await client().chat.completions.create(
      { model: "plain", messages: [{ role: "user", content: "hi" }] },
      { headers: { "X-Agent-Lab-Mode": "dual_agent" } },
    );
    expect(answer.choices[0]?.message.content).toBe("Hello there.");
    expect(upstream.requests).toHaveLength(2);
  });

  it("an upstream that stalls after its first bytes ends the client's stream with an error event (idle timeout)", async () => {
    const [role, hello] = completionStream({ text: ["Hel"] });
    upstream.enqueue(streamReply([role as string, hello as string], { ending: "stall" }));
    const response = await fetch(chatUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "stalling",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    });
    const text = await response.text();
    expect(text.startsWith(`${role}${hello}`)).toBe(true);
    const events = text.slice(`${role}${hello}`.length);
    expect(events).toMatch(/^data: \{"error":\{"message":"[^"]*no progress/);
    expect(events).toContain('"code":"upstream_timeout"');
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "failed");
  });

  it("an upstream that takes the request and sends no headers is a 504 (a stall), not a 502", async () => {
    upstream.enqueue({ kind: "hang" });
    const failure = await client()
      .chat.completions.create({ model: "silent", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe("upstream_timeout");
    expect(String((failure as Error).message)).toContain("no response headers within 300 ms");
    // One that refuses the connection is still unreachable: a 502.
    const closed = LabConfigFile.parse({
      upstreams: {
        gone: { base_url: "http://127.0.0.1:1/v1", model: "m", options: { max_retries: 0 } },
      },
    });
    const other = await startTestServer({ runTurnDefaults: { labConfig: closed, env: {} } });
    try {
      const refused = await new OpenAI({
        baseURL: new URL("/v1", other.url).href,
        apiKey: other.server.token as string,
        maxRetries: 0,
      }).chat.completions
        .create({ model: "gone", messages: [{ role: "user", content: "hi" }] })
        .catch((error: unknown) => error);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe("upstream_unreachable");
    } finally {
      await other.close();
    }
  });

  it("an upstream error event that quotes the lab's key reaches a pass-through client without it", async () => {
    const [role, hello] = completionStream({ text: ["Hel"] });
    const quoting = sseEvent({
      error: { message: `Invalid key Bearer ${UPSTREAM_KEY}`, type: "invalid_request_error" },
    });
    // The key also comes split over two writes: the lab holds back what could begin it.
    const cut = quoting.indexOf(UPSTREAM_KEY) + 5;
    upstream.enqueue(
      streamReply([
        role as string,
        hello as string,
        quoting.slice(0, cut),
        { waitMs: 30 },
        quoting.slice(cut),
      ]),
    );
    const response = await post({
      model: "fake",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = await response.text();
    expect(text.startsWith(`${role}${hello}`)).toBe(true);
    expect(text).toContain("Invalid key Bearer [redacted]");
    expect(text).not.toContain(UPSTREAM_KEY.slice(0, 12));
  });

  it("a model that writes the lab's key in its answer: no client gets it, rendered or streamed", async () => {
    const leaking = () =>
      streamReply(completionStream({ text: ["your key is ", `${UPSTREAM_KEY} ok`] }));
    upstream.enqueue(leaking(), leaking(), leaking());
    const ask = { messages: [{ role: "user", content: "what is my key?" }] };
    const whole = await (await post({ model: "fake", ...ask })).text();
    const rendered = await (await post({ model: "repairing", ...ask, stream: true })).text();
    const plain = await (await post({ model: "repairing", ...ask })).text();
    for (const [how, text] of [
      ["non-streaming pass-through", whole],
      ["dual_agent streamed", rendered],
      ["dual_agent whole", plain],
    ]) {
      expect(text, how).toContain("[redacted]");
      expect(text, how).not.toContain(UPSTREAM_KEY.slice(0, 12));
    }
  });

  it("a 429 reaches the client as a 429 in OpenAI's format, without the key", async () => {
    upstream.enqueue(
      errorReply(429, `slow down, key ${UPSTREAM_KEY}`, { "x-should-retry": "false" }),
    );
    const failure = await client()
      .chat.completions.create({ model: "fake", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(String((failure as Error).message)).not.toContain(UPSTREAM_KEY);
    const id = onlySession()?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["failed"]);
  });

  it("a stream cut after its first bytes ends with an error event; the turn is recorded failed", async () => {
    const [role, hello] = completionStream({ text: ["Hello"] });
    upstream.enqueue(streamReply([role as string, hello as string], { ending: "destroy" }));
    const stream = await client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    let text = "";
    const read = (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })();
    await expect(read).rejects.toThrow();
    expect(text).toBe("Hello");
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "failed");
  });

  it("an answer past the output limit stops the upstream call (the runtime leaves its stream); the turn fails, the client's stream ends", async () => {
    const [role] = completionStream({ text: [] });
    const piece = "x".repeat(100_000);
    // 1.1 million characters, past the default limits.max_output_chars (1,000,000), then silence:
    // only the lab closing the upstream request ends it.
    const chunks = Array.from({ length: 11 }, () => sseEvent(completionChunk({ content: piece })));
    upstream.enqueue(streamReply([role as string, ...chunks], { ending: "stall" }));
    const response = await post({
      model: "fake",
      messages: [{ role: "user", content: "say a lot" }],
      stream: true,
    });
    const reading = response.text().catch(() => "");
    await waitFor(() => upstream.requests.length === 1);
    await upstream.requests[0]?.closed;
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "failed");
    expect(server.store.listAuditLogs(id).map((row) => row.event)).toContain("turn_failed");
    expect(JSON.stringify(server.store.listAuditLogs(id))).toContain("output_limit");
    // The client got the upstream's bytes as they came, then the lab's error event naming the limit.
    const received = await reading;
    expect(received.length).toBeGreaterThan(1_000_000);
    expect(received.trimEnd().split("\n\n").at(-1)).toMatch(
      /^data: \{"error":.*limits\.max_output_chars/,
    );
  });

  it("a client that disconnects cancels the upstream call; the turn is recorded cancelled", async () => {
    const [role, hello] = completionStream({ text: ["Hello"] });
    upstream.enqueue(streamReply([role as string, hello as string], { ending: "stall" }));
    const controller = new AbortController();
    const response = await fetch(chatUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "fake",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
      signal: controller.signal,
    });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await upstream.requests[0]?.closed;
    await waitFor(() => server.store.listSessions().length === 1);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "cancelled");
  });
});

describe("retries", () => {
  it("a client's retry of an answered request gets the same answer, recorded once; a plain repeat is a new turn", async () => {
    upstream.enqueue(
      streamReply(completionStream({ text: ["First answer"] })),
      streamReply(completionStream({ text: ["Second answer"] })),
    );
    const body = { model: "fake", messages: [{ role: "user", content: "Once, please" }] };
    // As openai-node sends it: a retry count on every attempt, 0 on the first.
    const first = (await (await post(body, { "X-Stainless-Retry-Count": "0" })).json()) as {
      id: string;
    };
    const retried = (await (await post(body, { "X-Stainless-Retry-Count": "1" })).json()) as {
      id: string;
    };
    expect(retried).toEqual(first);
    expect(upstream.requests).toHaveLength(1);
    const id = onlySession()?.id as string;
    expect(server.store.listTurns(id)).toHaveLength(1);
    expect(server.store.usageSummary(id).calls).toHaveLength(1);
    expect(server.store.listAuditLogs(id).map((row) => row.event)).toContain(
      "gateway_retry_replayed",
    );

    // The same request again, not as a retry: the client wants a fresh answer.
    const again = (await (await post(body, { "X-Stainless-Retry-Count": "0" })).json()) as {
      choices: { message: { content: string } }[];
    };
    expect(again.choices[0]?.message.content).toBe("Second answer");
    expect(upstream.requests).toHaveLength(2);
  });

  it("a retry while its first attempt is still answering gets 409; the first goes on", async () => {
    const [role, hello] = completionStream({ text: ["Slow"] });
    const answered = gate();
    upstream.enqueue(
      streamReply([
        role as string,
        hello as string,
        { until: answered.opened },
        ...completionStream({ text: ["!"] }).slice(1),
      ]),
    );
    const body = { model: "fake", messages: [{ role: "user", content: "slowly" }], stream: true };
    const first = await post(body, { "Idempotency-Key": "req-7" });
    const reader = first.body?.getReader();
    await reader?.read();
    const retried = await post(body, { "Idempotency-Key": "req-7" });
    expect(await refusalOf(retried)).toMatchObject({ status: 409, code: "request_in_progress" });
    answered.open();
    while (!(await reader?.read())?.done);
    expect(upstream.requests).toHaveLength(1);
  });

  it("an Idempotency-Key sent again with another body is refused, not answered with the first body's answer", async () => {
    upstream.enqueue(streamReply(completionStream({ text: ["About cats"] })));
    const cats = { model: "fake", messages: [{ role: "user", content: "cats?" }] };
    const first = await post(cats, { "Idempotency-Key": "req-9" });
    expect(first.status).toBe(200);
    const other = await post(
      { model: "fake", messages: [{ role: "user", content: "dogs?" }] },
      { "Idempotency-Key": "req-9" },
    );
    expect(await refusalOf(other)).toMatchObject({
      status: 400,
      code: "idempotency_key_reused",
      message: expect.stringContaining("another request body"),
    });
    // The same body under the key is still a retry, answered again.
    const again = (await (await post(cats, { "Idempotency-Key": "req-9" })).json()) as {
      choices: { message: { content: string } }[];
    };
    expect(again.choices[0]?.message.content).toBe("About cats");
    expect(upstream.requests).toHaveLength(1);
  });

  it.each(["chat_agent_tools", "dual_agent"] as const)(
    "%s: openai-node's retry of a request whose first attempt failed is a new turn in the same session, whose model gets the message once",
    async (mode) => {
      upstream.enqueue(
        errorReply(500, "upstream hiccup"),
        streamReply(completionStream({ text: ["Fine now"] })),
      );
      const retrying = new OpenAI({
        baseURL: new URL("/v1", server.url).href,
        apiKey: token,
        maxRetries: 1,
        defaultHeaders: { "X-Agent-Lab-Mode": mode },
      });
      const answer = await retrying.chat.completions.create({
        model: "fake",
        messages: [{ role: "user", content: "try twice" }],
      });
      expect(answer.choices[0]?.message.content).toBe("Fine now");
      expect(upstream.requests).toHaveLength(2);
      expect(server.store.listSessions()).toHaveLength(1);
      const id = onlySession()?.id as string;
      await waitFor(() => server.store.listTurns(id).length === 2);
      expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual([
        "failed",
        "completed",
      ]);
      // In dual_agent the lab writes the request from the session's history, which holds the
      // failed turn's message too (pass-through sends the client's own body).
      const sent = upstream.requests[1]?.body as { messages: { role: string; content: string }[] };
      expect(sent.messages.filter((message) => message.role === "user")).toEqual([
        { role: "user", content: "try twice" },
      ]);
    },
  );

  it("a streamed answer is replayed byte for byte to a retry with the same Idempotency-Key", async () => {
    upstream.enqueue(streamReply(completionStream({ text: ["Streamed once"] })));
    const body = {
      model: "fake",
      messages: [{ role: "user", content: "Stream it" }],
      stream: true,
      stream_options: { include_usage: true },
    };
    const first = await (await post(body, { "Idempotency-Key": "req-42" })).text();
    const retried = await (await post(body, { "Idempotency-Key": "req-42" })).text();
    expect(retried).toBe(first);
    expect(first).toContain("Streamed once");
    expect(upstream.requests).toHaveLength(1);
  });
});

describe("tool replies and the turn they continue", () => {
  /** A client's first request, and the follow-up that answers its one call with `result`. */
  const conversation = (city: string) => ({
    first: {
      model: "fake",
      messages: [{ role: "user" as const, content: `Weather in ${city}?` }],
      tools: [WEATHER],
    },
    followUp: (call: unknown, result: string) => ({
      model: "fake",
      messages: [
        { role: "user" as const, content: `Weather in ${city}?` },
        { role: "assistant" as const, content: null, tool_calls: [call as never] },
        { role: "tool" as const, tool_call_id: "call_0", content: result },
      ],
      tools: [WEATHER],
    }),
  });

  it("two conversations waiting for calls of the same id each get their own replies, without a session header", async () => {
    // An upstream that numbers each answer's calls from call_0, as some local servers do.
    upstream.enqueue(
      toolCallReply("call_0", "get_weather", '{"city":"Rome"}'),
      toolCallReply("call_0", "get_weather", '{"city":"Oslo"}'),
    );
    const openai = client();
    const rome = conversation("Rome");
    const oslo = conversation("Oslo");
    const romeCall = (await openai.chat.completions.create(rome.first)).choices[0]?.message
      .tool_calls?.[0];
    const osloCall = (await openai.chat.completions.create(oslo.first)).choices[0]?.message
      .tool_calls?.[0];
    expect([romeCall?.id, osloCall?.id]).toEqual(["call_0", "call_0"]);
    // Oslo answers first: its reply must not go to Rome's turn, the older one.
    upstream.enqueue(
      streamReply(completionStream({ text: ["Oslo: snow."] })),
      streamReply(completionStream({ text: ["Rome: sun."] })),
    );
    const osloAnswer = await openai.chat.completions.create(oslo.followUp(osloCall, "snow, -3 C"));
    const romeAnswer = await openai.chat.completions.create(rome.followUp(romeCall, "sun, 24 C"));
    expect(osloAnswer.choices[0]?.message.content).toBe("Oslo: snow.");
    expect(romeAnswer.choices[0]?.message.content).toBe("Rome: sun.");
    await waitFor(() =>
      server.store.listSessions().every((session) => {
        const [turn] = server.store.listTurns(session.id);
        return turn?.status === "completed";
      }),
    );
    const toolReplies = Object.fromEntries(
      server.store
        .listSessions()
        .map((session) => [
          session.title,
          server.store.listMessages(session.id).find((message) => message.role === "tool")?.content,
        ]),
    );
    expect(toolReplies).toEqual({
      "Weather in Rome?": "sun, 24 C",
      "Weather in Oslo?": "snow, -3 C",
    });
  });

  it("two identical conversations waiting for the same call both go on (either turn is the other's twin)", async () => {
    upstream.enqueue(
      toolCallReply("call_0", "get_weather", '{"city":"Rome"}'),
      toolCallReply("call_0", "get_weather", '{"city":"Rome"}'),
    );
    const openai = client();
    const rome = conversation("Rome");
    const call = (await openai.chat.completions.create(rome.first)).choices[0]?.message
      .tool_calls?.[0];
    await openai.chat.completions.create(rome.first);
    upstream.enqueue(
      streamReply(completionStream({ text: ["Sunny."] })),
      streamReply(completionStream({ text: ["Sunny."] })),
    );
    for (const result of ["sun", "sun"]) {
      const answer = await openai.chat.completions.create(rome.followUp(call, result));
      expect(answer.choices[0]?.message.content).toBe("Sunny.");
    }
    await waitFor(() =>
      server.store
        .listSessions()
        .every((session) => server.store.listTurns(session.id)[0]?.status === "completed"),
    );
    expect(server.store.listSessions()).toHaveLength(2);
  });

  it("twin conversations whose answers differ under the same call id each keep their own records", async () => {
    upstream.enqueue(
      toolCallReply("call_0", "get_weather", '{"city":"Rome"}'),
      toolCallReply("call_0", "get_weather", '{"city":"Oslo"}'),
    );
    const openai = client();
    const twin = conversation("Rome or Oslo");
    const first = (await openai.chat.completions.create(twin.first)).choices[0]?.message
      .tool_calls?.[0];
    const second = (await openai.chat.completions.create(twin.first)).choices[0]?.message
      .tool_calls?.[0];
    const argumentsOf = (call: unknown) =>
      (call as { function: { arguments: string } } | undefined)?.function.arguments;
    expect([argumentsOf(first), argumentsOf(second)]).toEqual([
      '{"city":"Rome"}',
      '{"city":"Oslo"}',
    ]);
    upstream.enqueue(
      streamReply(completionStream({ text: ["Oslo: snow."] })),
      streamReply(completionStream({ text: ["Rome: sun."] })),
    );
    // The younger twin answers first: its reply must not go to the older twin's turn.
    await openai.chat.completions.create(twin.followUp(second, "snow in Oslo"));
    await openai.chat.completions.create(twin.followUp(first, "sun in Rome"));
    await waitFor(() =>
      server.store
        .listSessions()
        .every((session) => server.store.listTurns(session.id)[0]?.status === "completed"),
    );
    const pairs = server.store.listSessions().map((session) => {
      const messages = server.store.listMessages(session.id);
      const asked = messages.find((message) => message.role === "assistant")?.tool_calls[0];
      return [asked?.raw_arguments, messages.find((message) => message.role === "tool")?.content];
    });
    expect(pairs.sort()).toEqual([
      ['{"city":"Oslo"}', "snow in Oslo"],
      ['{"city":"Rome"}', "sun in Rome"],
    ]);
  });

  it("a follow-up that answers only some of the calls is refused at once, naming the rest; a whole one then goes on", async () => {
    upstream.enqueue(romeAndOsloReply("call_a", "call_b"));
    const openai = client();
    const messages = [{ role: "user" as const, content: "Weather in Rome and Oslo?" }];
    const first = await openai.chat.completions.create({
      model: "fake",
      messages,
      tools: [WEATHER],
    });
    const calls = first.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((call) => call.id)).toEqual(["call_a", "call_b"]);
    const answered = [
      ...messages,
      { role: "assistant" as const, content: null, tool_calls: calls },
      { role: "tool" as const, tool_call_id: "call_a", content: "sun" },
    ];
    const partial = await post({ model: "fake", messages: answered, tools: [WEATHER] });
    expect(await refusalOf(partial)).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      message: expect.stringContaining("none answers call_b"),
    });
    expect(upstream.requests).toHaveLength(1);
    upstream.enqueue(streamReply(completionStream({ text: ["Sun in Rome, snow in Oslo."] })));
    const whole = await openai.chat.completions.create({
      model: "fake",
      messages: [...answered, { role: "tool" as const, tool_call_id: "call_b", content: "snow" }],
      tools: [WEATHER],
    });
    expect(whole.choices[0]?.message.content).toBe("Sun in Rome, snow in Oslo.");
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
  });

  it("a streaming client's partial follow-up is refused, naming the call it leaves unanswered", async () => {
    upstream.enqueue(romeAndOsloReply("call_s1", "call_s2"));
    const messages = [{ role: "user" as const, content: "Both cities, streamed" }];
    const streamed = await post({ model: "fake", messages, tools: [WEATHER], stream: true });
    expect(await streamed.text()).toContain("call_s2");
    // At once: the client has every byte; the lab's runtime may not have read them yet (the
    // calls the client was handed count then, as the bridge's waiting ones do once it has).
    const partial = await post({
      model: "fake",
      messages: [
        ...messages,
        {
          role: "assistant",
          content: null,
          tool_calls: ["call_s1", "call_s2"].map((id) => ({
            id,
            type: "function",
            function: { name: "get_weather", arguments: "{}" },
          })),
        },
        { role: "tool", tool_call_id: "call_s1", content: "sun" },
      ],
      tools: [WEATHER],
    });
    expect(await refusalOf(partial)).toMatchObject({
      status: 400,
      message: expect.stringContaining("none answers call_s2"),
    });
  });
});

describe("the turn and its client, as the review found them", () => {
  it("a non-streaming client gets a call to a tool it did not declare, and its reply goes upstream", async () => {
    upstream.enqueue(
      toolCallReply("call_x", "not_declared", "{}"),
      streamReply(completionStream({ text: ["done"] })),
    );
    const openai = client();
    const first = await openai.chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "go" }],
      tools: [WEATHER],
    });
    expect(first.choices[0]?.message.tool_calls?.[0]).toMatchObject({ id: "call_x" });
    const second = await openai.chat.completions.create({
      model: "fake",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: first.choices[0]?.message.tool_calls as never,
        },
        { role: "tool", tool_call_id: "call_x", content: "whatever" },
      ],
      tools: [WEATHER],
    });
    expect(second.choices[0]?.message.content).toBe("done");
    expect(upstream.requests).toHaveLength(2);
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
  });

  it("a streaming client replies to an id the upstream repeated, once per call, right away", async () => {
    const call = (index: number) => ({
      index,
      id: "call_0",
      type: "function" as const,
      function: { name: "get_weather", arguments: `{"city":"C${index}"}` },
    });
    upstream.enqueue(
      streamReply(completionStream({ toolCalls: [call(0), call(1)] })),
      streamReply(completionStream({ text: ["both done"] })),
    );
    const streamed = await client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "two cities" }],
      tools: [WEATHER],
      stream: true,
    });
    const ids: string[] = [];
    for await (const chunk of streamed) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? [])
        if (delta.id) ids.push(delta.id);
    }
    expect(ids).toEqual(["call_0", "call_0"]);
    // Replied at once: the lab may not have recorded the calls yet.
    const second = await client().chat.completions.create({
      model: "fake",
      messages: [
        { role: "user", content: "two cities" },
        {
          role: "assistant",
          content: null,
          tool_calls: [0, 1].map((index) => ({
            id: "call_0",
            type: "function" as const,
            function: { name: "get_weather", arguments: `{"city":"C${index}"}` },
          })),
        },
        { role: "tool", tool_call_id: "call_0", content: "sunny" },
        { role: "tool", tool_call_id: "call_0", content: "rainy" },
      ],
      tools: [WEATHER],
    });
    expect(second.choices[0]?.message.content).toBe("both done");
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    const replies = server.store.listMessages(id).filter((message) => message.role === "tool");
    expect(replies.map((reply) => [reply.tool_call_id, reply.content])).toEqual([
      ["call_0", "sunny"],
      ["call_0_2", "rainy"],
    ]);
  });

  it("a second request while the session's turn is still answering gets 409; the first goes on", async () => {
    const [role, hello] = completionStream({ text: ["Hello"] });
    const answered = gate();
    upstream.enqueue(
      streamReply([
        role as string,
        hello as string,
        { until: answered.opened },
        ...completionStream({ text: [" again"] }).slice(1),
      ]),
    );
    const session = { "X-Agent-Lab-Session": "busy-session" };
    const first = await post(
      { model: "fake", messages: [{ role: "user", content: "first" }], stream: true },
      session,
    );
    const reader = first.body?.getReader();
    await reader?.read();
    const second = await post(
      { model: "fake", messages: [{ role: "user", content: "second" }] },
      session,
    );
    expect(await refusalOf(second)).toMatchObject({ status: 409, code: "turn_in_progress" });
    answered.open();
    let rest = "";
    const decoder = new TextDecoder();
    for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
      rest += decoder.decode(read.value);
    }
    expect(rest).toContain("again");
    expect(rest).not.toContain('"error"');
    await waitFor(() => server.store.listTurns("busy-session")[0]?.status === "completed");
    expect(upstream.requests).toHaveLength(1);
  });

  it("a named session keeps its model (another one: 409 before any upstream call); a conversation that changes model goes on in a session of its own", async () => {
    const first = await post(
      { model: "sim", messages: [{ role: "user", content: "hello there" }] },
      { "X-Agent-Lab-Session": "pinned" },
    );
    expect(first.status).toBe(200);
    const other = await post(
      { model: "fake", messages: [{ role: "user", content: "hello there" }] },
      { "X-Agent-Lab-Session": "pinned" },
    );
    expect(await refusalOf(other)).toMatchObject({
      status: 409,
      code: "session_model_mismatch",
      message: expect.stringContaining("name another session"),
    });
    expect(upstream.requests).toHaveLength(0);

    const simAnswer = (await (
      await post({ model: "sim", messages: [{ role: "user", content: "tell me" }] })
    ).json()) as { choices: { message: { content: string } }[] };
    const said = simAnswer.choices[0]?.message.content as string;
    upstream.enqueue(streamReply(completionStream({ text: ["From the upstream."] })));
    const switched = await post({
      model: "fake",
      messages: [
        { role: "user", content: "tell me" },
        { role: "assistant", content: said },
        { role: "user", content: "and more" },
      ],
    });
    expect(switched.status).toBe(200);
    await waitFor(() => server.store.listSessions().length === 3);
    const models = server.store
      .listSessions()
      .map((session) => {
        const config = server.store.getSession(session.id)?.config as
          | { chat_agent?: { model?: string } }
          | undefined;
        return config?.chat_agent?.model;
      })
      .sort();
    expect(models).toEqual(["openai:fake-model", "sim", "sim"]);
  });

  it("refuses n > 1 by name instead of answering one choice", async () => {
    const refused = await post({
      model: "fake",
      n: 2,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(await refusalOf(refused)).toMatchObject({
      status: 400,
      message: expect.stringContaining("only n: 1 is supported"),
    });
    expect(upstream.requests).toHaveLength(0);
    upstream.enqueue(streamReply(completionStream({ text: ["One."] })));
    const one = await post({ model: "fake", n: 1, messages: [{ role: "user", content: "hi" }] });
    expect(one.status).toBe(200);
  });

  it("a session whose native turn is running refuses a gateway turn before any upstream call", async () => {
    const created = await server.api("/api/sessions", {
      method: "POST",
      json: { title: "native", config: SLOW_SIM_CONFIG },
    });
    const { session } = (await created.json()) as { session: { id: string } };
    const controller = new AbortController();
    const native = server.api(`/api/sessions/${session.id}/turns`, {
      method: "POST",
      json: { message: "write me a long story about the sea" },
      signal: controller.signal,
    });
    await waitFor(() => server.store.listTurns(session.id)[0]?.status === "running");
    const refused = await post(
      { model: "fake", messages: [{ role: "user", content: "cut in" }], stream: true },
      { "X-Agent-Lab-Session": session.id },
    );
    expect(await refusalOf(refused)).toMatchObject({ status: 409, code: "turn_in_progress" });
    expect(upstream.requests).toHaveLength(0);
    controller.abort();
    await native.catch(() => {});
  });
});

describe("the AI SDK in front of a real upstream", () => {
  it("streamText's multi-step tool loop passes through, recorded as one turn of two rounds", async () => {
    upstream.enqueue(
      toolCallReply("call_ai", "get_weather", '{"city":"Oslo"}'),
      streamReply(completionStream({ text: ["Oslo: cold."] })),
    );
    const lab = createOpenAICompatible({
      name: "lab",
      baseURL: new URL("/v1", server.url).href,
      apiKey: token,
      includeUsage: true,
    });
    const result = streamText({
      model: lab("fake"),
      prompt: "Weather in Oslo?",
      tools: {
        get_weather: tool({
          description: "weather",
          inputSchema: jsonSchema<{ city: string }>(WEATHER.function.parameters as never),
          execute: async ({ city }) => `cold in ${city}`,
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    let text = "";
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") text += part.text;
      if (part.type === "error") throw part.error;
    }
    expect(text).toBe("Oslo: cold.");
    expect((await result.totalUsage).inputTokens).toBe(20);
    // The client's tool result went upstream in its own words.
    expect(JSON.stringify(upstream.requests[1]?.body)).toContain("cold in Oslo");
    const id = onlySession()?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    expect(server.store.usageSummary(id).calls.map((call) => call.metric_key)).toEqual([
      "chat:1:1",
      "tool:1:1:call_ai",
      "chat:1:2",
    ]);
  });
});
