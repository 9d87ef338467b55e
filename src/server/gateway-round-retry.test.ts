import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../test/fake-openai-server.js";
import {
  fakeUpstreamDefaults,
  startTestServer,
  type TestServer,
  waitFor,
} from "./test-fixtures.js";

/**
 * An agent's tool loop through the gateway, in pass-through, when the upstream refuses a later
 * step once: the openai client retries the step, as it would against the upstream itself, and the
 * retry is the failed call's next attempt in the same turn.
 */

let upstream: FakeOpenAIServer;
let server: TestServer;

async function start(clientWaitMs?: number): Promise<void> {
  upstream = await FakeOpenAIServer.start();
  server = await startTestServer({
    runTurnDefaults: fakeUpstreamDefaults(upstream.baseUrl),
    ...(clientWaitMs === undefined ? {} : { gatewayClientWaitMs: clientWaitMs }),
  });
}
afterEach(async () => {
  await server.close();
  await upstream.close();
});

const WEATHER = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

const client = (maxRetries: number) =>
  new OpenAI({
    baseURL: new URL("/v1", server.url).href,
    apiKey: server.server.token as string,
    maxRetries,
  });

/** The first request of a weather loop, not streamed: its messages, and the calls it got. */
async function askWeather(openai: OpenAI) {
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "user", content: "Weather in Oslo?" },
  ];
  const first = await openai.chat.completions.create({ model: "fake", messages, tools: [WEATHER] });
  return { messages, calls: first.choices[0]?.message.tool_calls ?? [] };
}

/** Step one: the model asks for the weather; returns the messages of step two. */
async function stepOne(openai: OpenAI, stream: boolean, question = "Weather in Oslo?") {
  upstream.enqueue(
    streamReply(
      completionStream({
        toolCalls: [
          {
            index: 0,
            id: "call_w",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
        ],
      }),
    ),
  );
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: question }];
  let calls: OpenAI.ChatCompletionMessageToolCall[] = [];
  if (stream) {
    const chunks = await openai.chat.completions.create({
      model: "fake",
      messages,
      tools: [WEATHER],
      stream: true,
    });
    const args: string[] = [];
    for await (const chunk of chunks) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        args[call.index] = (args[call.index] ?? "") + (call.function?.arguments ?? "");
      }
    }
    calls = [
      {
        id: "call_w",
        type: "function",
        function: { name: "get_weather", arguments: args[0] ?? "" },
      },
    ];
  } else {
    const reply = await openai.chat.completions.create({
      model: "fake",
      messages,
      tools: [WEATHER],
    });
    calls = reply.choices[0]?.message.tool_calls ?? [];
  }
  return [
    ...messages,
    { role: "assistant" as const, content: null, tool_calls: calls },
    { role: "tool" as const, tool_call_id: "call_w", content: "Oslo: 3°C, snow" },
  ];
}

describe.each([false, true])(
  "a tool loop whose second step the upstream refuses once (stream: %s)",
  (stream) => {
    it("goes on when the client retries the step: one turn, completed, the failed attempt recorded", async () => {
      await start();
      const openai = client(1);
      const messages = await stepOne(openai, stream);
      upstream.enqueue(
        errorReply(503, "overloaded", { "retry-after-ms": "10" }),
        streamReply(completionStream({ text: ["Snow in Oslo, 3°C."] })),
      );
      let answer = "";
      if (stream) {
        const chunks = await openai.chat.completions.create({
          model: "fake",
          messages,
          tools: [WEATHER],
          stream: true,
        });
        for await (const chunk of chunks) answer += chunk.choices[0]?.delta.content ?? "";
      } else {
        const reply = await openai.chat.completions.create({
          model: "fake",
          messages,
          tools: [WEATHER],
        });
        answer = reply.choices[0]?.message.content ?? "";
      }
      expect(answer).toBe("Snow in Oslo, 3°C.");
      expect(upstream.requests).toHaveLength(3);
      const [session] = server.store.listSessions();
      const id = session?.id as string;
      await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
      expect(server.store.listSessions()).toHaveLength(1);
      expect(server.store.listTurns(id)).toHaveLength(1);
      expect(server.store.listMessages(id).map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      // One model call a round, the second after its refused attempt.
      const calls = server.store.usageSummary(id).calls;
      expect(
        calls.filter((call) => call.call_kind === "chat_completion").map((call) => call.metric_key),
      ).toEqual(["chat:1:1", "chat:1:2"]);
      const retries = server.store
        .listAuditLogs(id)
        .filter((row) => row.event === "provider_retry");
      expect(retries).toHaveLength(1);
      expect(retries[0]?.details).toMatchObject({ status: 503, attempt: 1 });
    });
  },
);

describe("a tool loop whose second step the upstream refuses eleven times", () => {
  it("goes on after the client's eleventh retry, leaving no listener behind on the turn's signal (no leak warning)", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      await start();
      const REFUSALS = 11;
      const openai = client(REFUSALS);
      const messages = await stepOne(openai, false);
      upstream.enqueue(
        ...Array.from({ length: REFUSALS }, () =>
          errorReply(503, "overloaded", { "retry-after-ms": "1" }),
        ),
        streamReply(completionStream({ text: ["Snow in Oslo, 3°C."] })),
      );
      const reply = await openai.chat.completions.create({
        model: "fake",
        messages,
        tools: [WEATHER],
      });
      expect(reply.choices[0]?.message.content).toBe("Snow in Oslo, 3°C.");
      expect(upstream.requests).toHaveLength(REFUSALS + 2);
      const id = server.store.listSessions()[0]?.id as string;
      await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
      expect(server.store.listTurns(id)).toHaveLength(1);
      const retries = server.store
        .listAuditLogs(id)
        .filter((row) => row.event === "provider_retry");
      expect(retries).toHaveLength(REFUSALS);
      // Each refused attempt waited for the client's retry on the turn's signal; a listener left
      // from each would pass Node's ten and warn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.includes("MaxListenersExceeded"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("a pass-through follow-up from a client that trimmed its history", () => {
  it("goes on in its turn when its last assistant message repeats the calls it got (streamed at once)", async () => {
    await start();
    const openai = client(0);
    const messages = await stepOne(openai, true);
    upstream.enqueue(streamReply(completionStream({ text: ["Snow."] })));
    // Only the calls and their reply: the first user message was dropped to save context.
    const reply = await openai.chat.completions.create({
      model: "fake",
      messages: messages.slice(1),
      tools: [WEATHER],
    });
    expect(reply.choices[0]?.message.content).toBe("Snow.");
    const id = server.store.listSessions()[0]?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    expect(server.store.listSessions()).toHaveLength(1);
  });
});

describe.each([
  { stream: false, trimmed: false },
  { stream: true, trimmed: false },
  // Only the calls and their replies: the client dropped the user message to save context.
  { stream: false, trimmed: true },
])(
  "dual_agent: a tool loop whose second step the upstream refuses once (stream: $stream, trimmed: $trimmed)",
  ({ stream, trimmed }) => {
    it("goes on when the client retries the step: one turn, completed, the refused attempt recorded", async () => {
      await start();
      const openai = new OpenAI({
        baseURL: new URL("/v1", server.url).href,
        apiKey: server.server.token as string,
        maxRetries: 1,
        defaultHeaders: { "X-Agent-Lab-Mode": "dual_agent" },
      });
      upstream.enqueue(
        streamReply(
          completionStream({ text: ['<event name="get_weather">{"city":"Oslo"}</event>'] }),
        ),
      );
      const { messages, calls } = await askWeather(openai);
      expect(
        calls.map((call) => (call.type === "function" ? call.function.name : call.type)),
      ).toEqual(["get_weather"]);
      // The upstream refuses the next step once; openai-node retries it after the 429.
      upstream.enqueue(
        errorReply(429, "slow down", { "retry-after-ms": "10" }),
        streamReply(completionStream({ text: ["Snow in Oslo."] })),
      );
      const next = [
        ...(trimmed ? [] : messages),
        { role: "assistant" as const, content: null, tool_calls: calls },
        { role: "tool" as const, tool_call_id: calls[0]?.id as string, content: "3°C, snow" },
      ];
      let text = "";
      if (stream) {
        const chunks = await openai.chat.completions.create({
          model: "fake",
          messages: next,
          tools: [WEATHER],
          stream: true,
        });
        for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? "";
      } else {
        const reply = await openai.chat.completions.create({
          model: "fake",
          messages: next,
          tools: [WEATHER],
        });
        text = reply.choices[0]?.message.content ?? "";
      }
      expect(text).toBe("Snow in Oslo.");
      expect(upstream.requests).toHaveLength(3);
      const id = server.store.listSessions()[0]?.id as string;
      await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
      expect(server.store.listSessions()).toHaveLength(1);
      expect(server.store.listTurns(id)).toHaveLength(1);
      const retries = server.store
        .listAuditLogs(id)
        .filter((row) => row.event === "provider_retry");
      expect(retries).toHaveLength(1);
      expect(retries[0]?.details).toMatchObject({ status: 429, attempt: 1 });
      const chat = server.store
        .usageSummary(id)
        .calls.filter((call) => call.call_kind === "chat_completion");
      expect(chat.map((call) => call.metric_key)).toEqual(["chat:1:1", "chat:1:2"]);
    });
  },
);

describe("two conversations whose calls have the same ids and arguments", () => {
  it("a follow-up of one never continues the other's waiting turn, even once its own turn ended", async () => {
    await start();
    const openai = client(0);
    // A asks and never replies; B asks the same of an upstream that numbers its calls alike.
    await stepOne(openai, false, "Weather in Oslo? (conversation A)");
    const b = await stepOne(openai, false, "Weather in Oslo? (conversation B)");
    b[2] = { role: "tool", tool_call_id: "call_w", content: "B's private tool output" };
    upstream.enqueue(streamReply(completionStream({ text: ["Snow, for B."] })));
    const answered = await openai.chat.completions.create({
      model: "fake",
      messages: b,
      tools: [WEATHER],
    });
    expect(answered.choices[0]?.message.content).toBe("Snow, for B.");
    // B sends its step again (a client that repeats itself): its turn is over, A's still waits.
    // In pass-through the repeat goes upstream as it is, as a turn of its own (as it would
    // without the lab), never into A's turn.
    upstream.enqueue(streamReply(completionStream({ text: ["Still snow, for B."] })));
    const again = await openai.chat.completions.create({
      model: "fake",
      messages: b,
      tools: [WEATHER],
    });
    expect(again.choices[0]?.message.content).toBe("Still snow, for B.");
    expect(upstream.requests).toHaveLength(4);
    expect(upstream.requests[3]?.body).toMatchObject({ messages: b });
    const sessions = server.store.listSessions();
    expect(sessions).toHaveLength(3);
    const a = sessions.find((session) => session.title.endsWith("(conversation A)"));
    const stored = server.store.listMessages(a?.id as string);
    expect(stored.map((message) => message.content).join("\n")).not.toContain("B's private");
    expect(server.store.listTurns(a?.id as string)[0]?.status).toBe("running");
  });
});

describe("a refused step the client gives up on", () => {
  it("its replies again with a new user message end the turn at once, not after the retry wait", async () => {
    await start();
    const openai = client(0);
    const step = await stepOne(openai, false);
    upstream.enqueue(errorReply(429, "slow down", { "x-should-retry": "true" }));
    await expect(
      openai.chat.completions.create({ model: "fake", messages: step, tools: [WEATHER] }),
    ).rejects.toMatchObject({ status: 429 });
    // The turn now waits (up to two minutes) for the retry of that step; the agent moves on.
    upstream.enqueue(streamReply(completionStream({ text: ["Fine, moving on."] })));
    const started = performance.now();
    const next = await openai.chat.completions.create({
      model: "fake",
      messages: [...step, { role: "user", content: "Skip it. Anything else?" }],
      tools: [WEATHER],
    });
    expect(next.choices[0]?.message.content).toBe("Fine, moving on.");
    expect(performance.now() - started).toBeLessThan(10_000);
    const [session] = server.store.listSessions();
    expect(server.store.listTurns(session?.id as string).map((turn) => turn.status)).toEqual([
      "cancelled",
      "completed",
    ]);
  });
});

describe("pass-through calls the lab would have refused itself", () => {
  it("arguments that are not JSON and a tool the client does not offer: the client's replies are recorded, as the model got them", async () => {
    await start();
    const openai = client(0);
    upstream.enqueue(
      streamReply(
        completionStream({
          toolCalls: [
            {
              index: 0,
              id: "call_bad",
              type: "function",
              function: { name: "get_weather", arguments: '{"city": Oslo' },
            },
            {
              index: 1,
              id: "call_odd",
              type: "function",
              function: { name: "rm_rf", arguments: "{}" },
            },
          ],
        }),
      ),
    );
    const { messages, calls } = await askWeather(openai);
    expect(calls.map((call) => call.id)).toEqual(["call_bad", "call_odd"]);
    upstream.enqueue(streamReply(completionStream({ text: ["Sorry about that."] })));
    const replies = [
      "Invalid input for tool get_weather: JSON parsing failed",
      "CLIENT SAYS: refused to run rm_rf",
    ];
    const second = await openai.chat.completions.create({
      model: "fake",
      messages: [
        ...messages,
        { role: "assistant", content: null, tool_calls: calls },
        { role: "tool", tool_call_id: "call_bad", content: replies[0] as string },
        { role: "tool", tool_call_id: "call_odd", content: replies[1] as string },
      ],
      tools: [WEATHER],
    });
    expect(second.choices[0]?.message.content).toBe("Sorry about that.");
    const id = server.store.listSessions()[0]?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "completed");
    const tools = server.store.listMessages(id).filter((message) => message.role === "tool");
    expect(tools.map((message) => [message.tool_call_id, message.content])).toEqual([
      ["call_bad", replies[0]],
      ["call_odd", replies[1]],
    ]);
    const ends = server.store.listAuditLogs(id).filter((row) => row.event === "tool_end");
    expect(ends.map((row) => row.details.ok)).toEqual([true, true]);
  });
});

describe("a refused step the upstream says not to retry", () => {
  it("is not waited for: the client hears x-should-retry false and the turn ends failed at once", async () => {
    await start();
    const openai = client(2);
    const messages = await stepOne(openai, false);
    upstream.enqueue(errorReply(500, "broken for good", { "x-should-retry": "false" }));
    const refused = openai.chat.completions.create({ model: "fake", messages, tools: [WEATHER] });
    await expect(refused).rejects.toMatchObject({ status: 500 });
    // openai-node did not retry, and the turn did not wait the 2 minutes for it.
    expect(upstream.requests).toHaveLength(2);
    const id = server.store.listSessions()[0]?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "failed", 5_000);
    expect(server.store.listAuditLogs(id).some((row) => row.event === "provider_retry")).toBe(
      false,
    );
  });
});

describe("a client that does not retry the refused step", () => {
  it("gets the upstream's refusal, and the turn ends failed with it once the wait for a retry is over", async () => {
    await start(300);
    const openai = client(0);
    const messages = await stepOne(openai, false);
    upstream.enqueue(errorReply(503, "overloaded"));
    const refused = openai.chat.completions.create({
      model: "fake",
      messages,
      tools: [WEATHER],
    });
    await expect(refused).rejects.toMatchObject({ status: 503 });
    const id = server.store.listSessions()[0]?.id as string;
    await waitFor(() => server.store.listTurns(id)[0]?.status === "failed");
    const failure = server.store.listAuditLogs(id).find((row) => row.event === "turn_failed");
    expect(JSON.stringify(failure?.details)).toContain("overloaded");
  });
});
