import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, waitFor } from "./test-fixtures.js";

/**
 * The gateway as an existing agent meets it: the official openai client and the AI SDK, pointed at
 * the lab with nothing but a base URL and the lab's token as their key, on the simulated model.
 * What they receive is checked, and what the lab recorded.
 */

let server: TestServer;
let token: string;

beforeEach(async () => {
  server = await startTestServer();
  token = server.server.token as string;
});
afterEach(async () => {
  await server.close();
});

const baseURL = () => new URL("/v1", server.url).href;
const openai = (headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: baseURL(), apiKey: token, maxRetries: 0, defaultHeaders: headers });

const LOOKUP: ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Looks up the weather of a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    },
  },
};

function gatewaySessions() {
  return server.store
    .listSessions()
    .map((item) => server.store.getSession(item.id))
    .filter((session) => session !== null && "gateway" in session.config);
}

/** A first request that the sim answers with tool calls: what was asked, the answer, its call ids. */
async function askForCalls(client: OpenAI, content: string) {
  const asked: ChatCompletionMessageParam = { role: "user", content };
  const first = await client.chat.completions.create({
    model: "sim",
    messages: [asked],
    tools: [LOOKUP],
  });
  const message = first.choices[0]?.message as ChatCompletionMessageParam & {
    tool_calls: { id: string }[];
  };
  return { asked, message, ids: message.tool_calls.map((call) => call.id) };
}

describe("gateway on the simulated model, through the openai client", () => {
  it("answers a plain request and records it as a gateway session with one turn and its usage", async () => {
    const completion = await openai().chat.completions.create({
      model: "sim",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hello there, who are you?" },
      ],
    });
    const answer = completion.choices[0]?.message.content ?? "";
    expect(answer.length).toBeGreaterThan(0);
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);

    const [session] = gatewaySessions();
    expect(session?.config).toMatchObject({
      tool_invocation_mode: "chat_agent_tools",
      gateway: { requested_model: "sim", upstream: null, grouped_by: "conversation" },
      tags: ["gateway"],
      chat_agent: { model: "sim", system_prompt: "You are terse." },
    });
    const id = session?.id as string;
    const turns = server.store.listTurns(id);
    expect(turns.map((turn) => turn.status)).toEqual(["completed"]);
    const messages = server.store.listMessages(id);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "Hello there, who are you?"],
      ["assistant", answer],
    ]);
    const calls = server.store.usageSummary(id).calls;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ metric_key: "chat:1:1" });
    expect(calls[0]?.prompt_tokens).toBe(completion.usage?.prompt_tokens);
  });

  it("streams a tool call to the client; its reply continues the same turn, recorded round by round", async () => {
    const client = openai();
    const messages: ChatCompletionMessageParam[] = [
      { role: "user", content: 'call lookup with {"city": "Paris"}' },
    ];
    const first = await client.chat.completions.create({
      model: "sim",
      messages,
      tools: [LOOKUP],
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let finish: string | null = null;
    let sawUsage = false;
    for await (const chunk of first) {
      if (chunk.usage) sawUsage = true;
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: "", name: "", arguments: "" };
        call.id ||= delta.id ?? "";
        call.name ||= delta.function?.name ?? "";
        call.arguments += delta.function?.arguments ?? "";
        calls.set(delta.index, call);
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expect(sawUsage).toBe(true);
    const call = calls.get(0);
    expect(call?.name).toBe("lookup");
    expect(JSON.parse(call?.arguments ?? "")).toEqual({ city: "Paris" });

    messages.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: call?.id as string,
            type: "function",
            function: { name: "lookup", arguments: call?.arguments as string },
          },
        ],
      },
      { role: "tool", tool_call_id: call?.id as string, content: "Sunny, 21 C" },
    );
    const second = await client.chat.completions.create({
      model: "sim",
      messages,
      tools: [LOOKUP],
    });
    expect(second.choices[0]?.finish_reason).toBe("stop");
    expect(second.choices[0]?.message.content?.length).toBeGreaterThan(0);

    const [session] = gatewaySessions();
    const id = session?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["completed"]);
    const stored = server.store.listMessages(id);
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(stored[1]?.tool_calls[0]).toMatchObject({ id: call?.id, name: "lookup" });
    // The client's reply is kept as the client wrote it, not re-encoded as JSON.
    expect(stored[2]).toMatchObject({ tool_call_id: call?.id, content: "Sunny, 21 C" });
    const keys = server.store.usageSummary(id).calls.map((row) => row.metric_key);
    expect(keys).toEqual(["chat:1:1", `tool:1:1:${call?.id}`, "chat:1:2"]);
  });

  it("keeps one session per conversation: a resent history continues it; a new conversation starts another", async () => {
    const client = openai();
    const first = await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "Tell me about owls" }],
    });
    const answer = first.choices[0]?.message.content ?? "";
    await client.chat.completions.create({
      model: "sim",
      messages: [
        { role: "user", content: "Tell me about owls" },
        { role: "assistant", content: answer },
        { role: "user", content: "And about crows?" },
      ],
    });
    await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "Something else entirely" }],
    });
    const sessions = gatewaySessions();
    expect(sessions).toHaveLength(2);
    const turnsPer = sessions.map(
      (session) => server.store.listTurns(session?.id as string).length,
    );
    expect(turnsPer.sort()).toEqual([1, 2]);
  });

  it("a conversation that goes on in another mode, unnamed, goes on in a session of its own", async () => {
    const first = await openai().chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "Tell me about owls" }],
    });
    const answer = first.choices[0]?.message.content ?? "";
    const next = await openai({ "X-Agent-Lab-Mode": "dual_agent" }).chat.completions.create({
      model: "sim",
      messages: [
        { role: "user", content: "Tell me about owls" },
        { role: "assistant", content: answer },
        { role: "user", content: "And about crows?" },
      ],
    });
    expect(next.choices[0]?.message.content).toBeTruthy();
    const modes = gatewaySessions().map((session) => session?.config.tool_invocation_mode);
    expect(modes.sort()).toEqual(["chat_agent_tools", "dual_agent"]);
  });

  it("tells apart two conversations that got the same answer: each goes on in its own session", async () => {
    const client = openai();
    const opened = async (content: string) => {
      const reply = await client.chat.completions.create({
        model: "sim",
        messages: [{ role: "user", content }],
      });
      return reply.choices[0]?.message.content ?? "";
    };
    const alice = await opened("hi, I am Alice");
    const bob = await opened("hi, I am Bob");
    // The sim greets both alike, as a model often does: the answer alone cannot tell them apart.
    expect(bob).toBe(alice);
    const followUp = async (who: string) =>
      client.chat.completions.create({
        model: "sim",
        messages: [
          { role: "user", content: `hi, I am ${who}` },
          { role: "assistant", content: alice },
          { role: "user", content: `${who}: what did I say first?` },
        ],
      });
    await followUp("Alice");
    await followUp("Bob");
    const sessions = gatewaySessions();
    expect(sessions).toHaveLength(2);
    const userMessages = sessions.map((session) =>
      server.store
        .listMessages(session?.id as string)
        .filter((message) => message.role === "user")
        .map((message) => message.content),
    );
    expect(userMessages.sort()).toStrictEqual([
      ["hi, I am Alice", "Alice: what did I say first?"],
      ["hi, I am Bob", "Bob: what did I say first?"],
    ]);
  });

  it("goes on in the session when the client marks its earlier messages differently (prompt-cache markers, a part list)", async () => {
    const ask = async (messages: unknown[]) => {
      const response = await fetch(`${baseURL()}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "sim", messages }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]
        ?.message.content;
    };
    const answer = await ask([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Tell me about owls" },
    ]);
    await ask([
      { role: "system", content: "Be brief.", cache_control: { type: "ephemeral" } },
      {
        role: "user",
        content: [
          { type: "text", text: "Tell me about owls", cache_control: { type: "ephemeral" } },
        ],
      },
      { role: "assistant", content: answer },
      { role: "user", content: "And about crows?" },
    ]);
    const sessions = gatewaySessions();
    expect(sessions).toHaveLength(1);
    expect(server.store.listTurns(sessions[0]?.id as string)).toHaveLength(2);
  });

  it("reads X-Agent-Lab-Session as UTF-8 (curl sends a name so) or, when it is not, as Latin-1 (fetch does)", async () => {
    // fetch sends each character of a header value as one byte: UTF-8's bytes, written out.
    const asBytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");
    const ask = (session: string) =>
      fetch(`${baseURL()}/chat/completions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "x-agent-lab-session": session,
        },
        body: JSON.stringify({ model: "sim", messages: [{ role: "user", content: "hello" }] }),
      });
    const named = await ask(asBytes("café-1"));
    expect(named.status).toBe(200);
    expect(server.store.getSession("café-1")?.title).toBe("hello");
    // fetch and openai-node send é as its one Latin-1 byte: the same name.
    expect((await ask("café-1")).status).toBe(200);
    expect(server.store.listTurns("café-1")).toHaveLength(2);
    expect(server.store.listSessions().map((session) => session.id)).toStrictEqual(["café-1"]);
  });

  it("a refusal no retry can change is not retried: openai-node, retrying by default, asks once", async () => {
    await openai({ "X-Agent-Lab-Session": "fixed" }).chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "hello" }],
    });
    let requests = 0;
    const retrying = new OpenAI({
      baseURL: baseURL(),
      apiKey: token,
      defaultHeaders: { "X-Agent-Lab-Session": "fixed", "X-Agent-Lab-Mode": "dual_agent" },
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const refused = retrying.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "hello again" }],
    });
    await expect(refused).rejects.toMatchObject({ status: 409, code: "session_mode_mismatch" });
    expect(requests).toBe(1);
  });

  it("groups by X-Agent-Lab-Session when the client names it, and refuses replies no turn waits for", async () => {
    const client = openai({ "X-Agent-Lab-Session": "my-agent-run-1" });
    await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "First question" }],
    });
    await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "An unrelated second question" }],
    });
    expect(server.store.listTurns("my-agent-run-1")).toHaveLength(2);
    expect(server.store.getSession("my-agent-run-1")?.config).toMatchObject({
      gateway: { grouped_by: "header" },
    });

    const orphan = client.chat.completions.create({
      model: "sim",
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_nobody", type: "function", function: { name: "lookup", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_nobody", content: "late" },
      ],
    });
    await expect(orphan).rejects.toMatchObject({ status: 409, code: "no_waiting_turn" });
  });

  it("a user message after calls the client never answered ends the turn waiting for them and goes on in its session", async () => {
    const client = openai();
    const asked: ChatCompletionMessageParam = {
      role: "user",
      content: 'call lookup with {"city": "Paris"}',
    };
    const first = await client.chat.completions.create({
      model: "sim",
      messages: [asked],
      tools: [LOOKUP],
    });
    const message = first.choices[0]?.message;
    expect(message?.tool_calls).toHaveLength(1);
    const [session] = gatewaySessions();
    const id = session?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["running"]);

    // The user cut the agent short: no reply to the call, a new question instead.
    const next = await client.chat.completions.create({
      model: "sim",
      messages: [
        asked,
        message as ChatCompletionMessageParam,
        { role: "user", content: "Never mind. Hello!" },
      ],
      tools: [LOOKUP],
    });
    expect(next.choices[0]?.finish_reason).toBe("stop");
    expect(gatewaySessions()).toHaveLength(1);
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual([
      "cancelled",
      "completed",
    ]);
  });

  it("tool replies sent with a new user message are the calls' results: the waiting turn ends and the message starts the next", async () => {
    const client = openai();
    const { asked, message, ids } = await askForCalls(client, 'call lookup with {"city": "Paris"}');
    const callId = ids[0] as string;
    const result = '{"temp_c": 21, "sky": "sunny"}';
    // The agent answers its call and adds a message of its own in the same request.
    const next = await client.chat.completions.create({
      model: "sim",
      messages: [
        asked,
        message,
        { role: "tool", tool_call_id: callId, content: result },
        { role: "user", content: "Thanks. Now say hello." },
      ],
      tools: [LOOKUP],
    });
    expect(next.choices[0]?.finish_reason).toBe("stop");
    const [session] = gatewaySessions();
    const id = session?.id as string;
    expect(gatewaySessions()).toHaveLength(1);
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual([
      "cancelled",
      "completed",
    ]);
    const messages = server.store.listMessages(id);
    expect(messages.map((entry) => [entry.turn_index, entry.role])).toEqual([
      [1, "user"],
      [1, "assistant"],
      [1, "tool"],
      [2, "user"],
      [2, "assistant"],
    ]);
    expect(messages[2]?.content).toBe(result);
    const calls = server.store.usageSummary(id).calls.map((call) => call.metric_key);
    expect(calls).toEqual(["chat:1:1", `tool:1:1:${callId}`, "chat:2:1"]);
    // The sim writes its request from the session's history: it was sent the client's result.
    const sent = server.store.getCallPayload(id, "chat:2:1")?.request_body ?? "";
    expect(sent).toContain("sunny");
    expect(sent).not.toContain("interrupted");
    const cancelled = server.store
      .listAuditLogs(id)
      .filter((entry) => entry.turn_index === 1 && entry.event === "tool_end");
    expect(cancelled.map((entry) => entry.details.ok)).toEqual([true]);
  });

  it("tool replies with a new user message must answer every call, as OpenAI requires: a 400 changes nothing", async () => {
    const client = openai();
    const { asked, message, ids } = await askForCalls(
      client,
      'call lookup with {"city": "Paris"}\ncall lookup with {"city": "Lima"}',
    );
    expect(ids).toHaveLength(2);
    const [answered, left] = ids as [string, string];
    const partial = client.chat.completions.create({
      model: "sim",
      messages: [
        asked,
        message,
        { role: "tool", tool_call_id: answered, content: "sunny" },
        { role: "user", content: "And now?" },
      ],
      tools: [LOOKUP],
    });
    await expect(partial).rejects.toMatchObject({ status: 400 });
    await expect(partial).rejects.toThrow(`none answers ${left}`);
    const [session] = gatewaySessions();
    const id = session?.id as string;
    // Still waiting for both replies: the whole follow-up goes on in the same turn.
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["running"]);
    const done = await client.chat.completions.create({
      model: "sim",
      messages: [
        asked,
        message,
        { role: "tool", tool_call_id: answered, content: "sunny" },
        { role: "tool", tool_call_id: left, content: "cloudy" },
      ],
      tools: [LOOKUP],
    });
    expect(done.choices[0]?.finish_reason).toBe("stop");
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["completed"]);
  });

  it("a user message after calls of another conversation with the same ids leaves that conversation's turn waiting", async () => {
    const client = openai();
    const first = await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: 'call lookup with {"city": "Paris"}' }],
      tools: [LOOKUP],
    });
    const message = first.choices[0]?.message as ChatCompletionMessageParam;
    // Another conversation whose last assistant message carries a call of the same id.
    await client.chat.completions.create({
      model: "sim",
      messages: [
        { role: "user", content: "A different conversation" },
        message,
        { role: "user", content: "Hello!" },
      ],
      tools: [LOOKUP],
    });
    const sessions = gatewaySessions();
    expect(sessions).toHaveLength(2);
    const statuses = sessions.map((session) =>
      server.store.listTurns(session?.id as string).map((turn) => turn.status),
    );
    expect(statuses).toContainEqual(["running"]);
    expect(statuses).toContainEqual(["completed"]);
  });

  it("tool replies of another conversation never reach a turn waiting for calls of the same ids", async () => {
    const client = openai();
    const asked = await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: 'call lookup with {"city": "Paris"}' }],
      tools: [LOOKUP],
    });
    const message = asked.choices[0]?.message as OpenAI.ChatCompletionMessage;
    const call = message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    const [session] = gatewaySessions();
    // Another conversation, whose own call (other arguments) has the same id; its turn is gone.
    const stranger = {
      ...message,
      tool_calls: [{ ...call, function: { ...call.function, arguments: '{"city":"Rome"}' } }],
    };
    const refused = client.chat.completions.create({
      model: "sim",
      messages: [
        { role: "system", content: "You are another agent." },
        { role: "user", content: "Where am I?" },
        stranger,
        { role: "tool", tool_call_id: call.id, content: "A-PRIVATE-DATA" },
      ],
      tools: [LOOKUP],
    });
    await expect(refused).rejects.toMatchObject({ status: 409, code: "no_waiting_turn" });
    const texts = () =>
      server.store.listMessages(session?.id as string).map((entry) => entry.content);
    expect(texts()).not.toContain("A-PRIVATE-DATA");
    // The conversation's own reply, from a client that trimmed its history down to the calls it
    // got, still goes on in its turn.
    await client.chat.completions.create({
      model: "sim",
      messages: [message, { role: "tool", tool_call_id: call.id, content: "Paris: sunny" }],
      tools: [LOOKUP],
    });
    expect(texts()).toContain("Paris: sunny");
    expect(server.store.listTurns(session?.id as string).map((turn) => turn.status)).toEqual([
      "completed",
    ]);
  });

  it("refuses a request without the lab's token, an unknown model and a bad body in OpenAI's format", async () => {
    const stranger = new OpenAI({ baseURL: baseURL(), apiKey: "not-the-token", maxRetries: 0 });
    await expect(
      stranger.chat.completions.create({
        model: "sim",
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 401, code: "invalid_api_key" });
    await expect(
      openai().chat.completions.create({
        model: "gpt-nowhere",
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    const bad = await fetch(`${baseURL()}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "sim", messages: [{ role: "robot", content: "hi" }] }),
    });
    expect(bad.status).toBe(400);
    const error = (await bad.json()) as {
      error: { message: string; type: string; param: string | null };
    };
    expect(error.error.type).toBe("invalid_request_error");
    expect(error.error.message).toMatch(/^request body: messages\.0\.role/);
    expect(error.error.param).toBe("messages.0.role");
    expect(gatewaySessions()).toHaveLength(0);
  });
});

describe("dual_agent by header", () => {
  it("X-Agent-Lab-Mode: dual_agent runs the sim as a chat agent writing event tags; the client sees only tool_calls", async () => {
    const client = openai({ "X-Agent-Lab-Mode": "dual_agent" });
    const first = await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: 'call lookup with {"city": "Quito"}' }],
      tools: [LOOKUP],
    });
    const message = first.choices[0]?.message;
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(message?.content ?? "").not.toContain("<event");
    const call = message?.tool_calls?.[0] as {
      id: string;
      function: { name: string; arguments: string };
    };
    expect(call.function.name).toBe("lookup");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Quito" });
    const [session] = gatewaySessions();
    expect(session?.config).toMatchObject({ tool_invocation_mode: "dual_agent" });
    // The chat agent was told of the tool by the event catalog, as dual_agent does.
    const start = server.store
      .listAuditLogs(session?.id as string)
      .find((row) => row.event === "turn_start");
    expect(JSON.stringify(start?.details)).toContain("lookup");
  });
});

describe("gateway on the simulated model, through the AI SDK", () => {
  const provider = () =>
    createOpenAICompatible({ name: "lab", baseURL: baseURL(), apiKey: token, includeUsage: true });
  const lookup = tool({
    description: "Looks up the weather of a city",
    inputSchema: jsonSchema<{ city: string }>({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    }),
    execute: async ({ city }) => `Sunny in ${city}`,
  });

  it("generateText runs its multi-step tool loop through one recorded turn", async () => {
    const result = await generateText({
      model: provider()("sim"),
      prompt: 'call lookup with {"city": "Oslo"}',
      tools: { lookup },
      stopWhen: stepCountIs(4),
      maxRetries: 0,
    });
    expect(result.steps.length).toBe(2);
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({
      toolName: "lookup",
      input: { city: "Oslo" },
    });
    expect(result.text.length).toBeGreaterThan(0);
    const [session] = gatewaySessions();
    const id = session?.id as string;
    expect(server.store.listTurns(id).map((turn) => turn.status)).toEqual(["completed"]);
    const tool = server.store.listMessages(id).find((message) => message.role === "tool");
    expect(tool?.content).toContain("Sunny in Oslo");
  });

  it("streamText streams the same loop, with usage", async () => {
    const result = streamText({
      model: provider()("sim"),
      prompt: 'call lookup with {"city": "Lima"}',
      tools: { lookup },
      stopWhen: stepCountIs(4),
      maxRetries: 0,
    });
    let text = "";
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") text += part.text;
      if (part.type === "error") throw part.error;
    }
    expect(text.length).toBeGreaterThan(0);
    expect((await result.steps).length).toBe(2);
    expect((await result.totalUsage).inputTokens).toBeGreaterThan(0);
    const [session] = gatewaySessions();
    expect(server.store.listTurns(session?.id as string)).toHaveLength(1);
  });
});

describe("a client that never comes back with its tool replies", () => {
  it("its turn waits the client wait, then ends cancelled with the calls answered interrupted; a late reply gets 409", async () => {
    await server.close();
    server = await startTestServer({ gatewayClientWaitMs: 300 });
    token = server.server.token as string;
    const client = openai();
    const first = await client.chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: 'call lookup with {"city": "Bern"}' }],
      tools: [LOOKUP],
    });
    const call = first.choices[0]?.message.tool_calls?.[0] as { id: string };
    const [session] = gatewaySessions();
    const id = session?.id as string;
    expect(server.store.listTurns(id)[0]?.status).toBe("running");
    await waitFor(() => server.store.listTurns(id)[0]?.status === "cancelled", 5_000);
    const reply = server.store.listMessages(id).find((message) => message.role === "tool");
    expect(reply?.content).toMatch(/interrupted/);
    const late = client.chat.completions.create({
      model: "sim",
      messages: [
        { role: "user", content: 'call lookup with {"city": "Bern"}' },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: call.id, type: "function", function: { name: "lookup", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: call.id, content: "too late" },
      ],
    });
    await expect(late).rejects.toMatchObject({ status: 409 });
  });
});

describe("gateway: a model whose key the lab's environment lacks", () => {
  it("is a 500 naming the variable, not a 400 the client would read as its own mistake, and not retried", async () => {
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    const lab = await startTestServer({ runTurnDefaults: { env } });
    try {
      let attempts = 0;
      const client = new OpenAI({
        baseURL: new URL("/v1", lab.url).href,
        apiKey: lab.server.token as string,
        // Retries as by default: the answer must tell it not to.
        maxRetries: 2,
        fetch: async (url: string | URL | Request, init?: RequestInit) => {
          attempts++;
          return fetch(url, init);
        },
      });
      const refused = client.chat.completions.create({
        model: "openai:gpt-4.1-mini",
        messages: [{ role: "user", content: "hello" }],
      });
      await expect(refused).rejects.toMatchObject({
        status: 500,
        code: "missing_api_key",
        type: "server_error",
      });
      await expect(refused).rejects.toThrow(
        "`OPENAI_API_KEY` is not set; the endpoint at https://api.openai.com/v1 needs a key",
      );
      expect(attempts).toBe(1);
      expect(lab.store.listSessions()).toHaveLength(0);

      // The AI SDK retries any 5xx (it reads no x-should-retry), by default after 2 s and 4 s:
      // told to wait 0 ms, its two retries follow at once and the error reaches the user before
      // the first backoff would have ended.
      let sdkAttempts = 0;
      const sdk = createOpenAICompatible({
        name: "lab",
        baseURL: new URL("/v1", lab.url).href,
        apiKey: lab.server.token as string,
        fetch: async (url: string | URL | Request, init?: RequestInit) => {
          sdkAttempts++;
          return fetch(url, init);
        },
      });
      const started = performance.now();
      await expect(
        generateText({ model: sdk("openai:gpt-4.1-mini"), prompt: "hello" }),
      ).rejects.toThrow("`OPENAI_API_KEY` is not set");
      expect(sdkAttempts).toBe(3);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(lab.store.listSessions()).toHaveLength(0);
    } finally {
      await lab.close();
    }
  });
});
