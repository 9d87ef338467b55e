import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { completionStream, FakeOpenAIServer, streamReply } from "../../test/fake-openai-server.js";
import { temporaryDirectory } from "../../test/paths.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { CONVERSATION_EVENT } from "./gateway/gateway-sessions.js";
import { type RunningServer, startServer } from "./start-server.js";
import { fakeUpstreamDefaults, waitFor } from "./test-fixtures.js";

/**
 * A conversation without `X-Agent-Lab-Session` is told apart by what it repeats of its last turn
 * (gateway-sessions.ts). What tells it apart is kept in the session's audit log as well as in
 * memory, so `serve` restarted within the gap still continues it: the openai client, pointed at
 * one server, then at another on the same file.
 */

let directory: ReturnType<typeof temporaryDirectory>;
let path: string;
let running: { server: RunningServer; store: SqliteSessionStore } | null = null;

beforeEach(() => {
  directory = temporaryDirectory();
  path = join(directory.path, "lab.sqlite3");
});
afterEach(async () => {
  await stop();
  directory.remove();
});

const logs: string[] = [];

async function start(
  gapMs?: number,
  served: (store: SqliteSessionStore) => SqliteSessionStore = (store) => store,
): Promise<OpenAI> {
  const store = new SqliteSessionStore(path);
  const server = await startServer({
    store: served(store),
    port: 0,
    webRoot: join(directory.path, "no-web-build"),
    log: (line) => logs.push(line),
    gatewayConversationGapMs: gapMs,
  });
  running = { server, store };
  return new OpenAI({
    baseURL: new URL("/v1", server.url).href,
    apiKey: server.token as string,
    maxRetries: 0,
  });
}

async function stop(): Promise<void> {
  if (running === null) return;
  await running.server.close();
  running.store.close();
  running = null;
}

/** The store of the server now running. */
function store(): SqliteSessionStore {
  if (running === null) throw new Error("no server is running");
  return running.store;
}

function gatewaySessionIds(): string[] {
  return store()
    .listSessions()
    .map((item) => item.id)
    .filter((id) => "gateway" in (store().getSession(id)?.config ?? {}));
}

function markers(sessionId: string) {
  return store()
    .listAuditLogs(sessionId)
    .filter((row) => row.event === CONVERSATION_EVENT);
}

/** The first turn of a conversation, on the server now running; its answer once it is recorded. */
async function opening(client: OpenAI, headers: Record<string, string> = {}): Promise<string> {
  const reply = await client.chat.completions.create(
    { model: "sim", messages: [{ role: "user", content: "Tell me about owls" }] },
    { headers },
  );
  // The marker is written when the turn has ended, just after the answer went out.
  await waitFor(() => gatewaySessionIds().some((id) => markers(id).length === 1));
  return reply.choices[0]?.message.content ?? "";
}

function followUp(client: OpenAI, answer: string, headers: Record<string, string> = {}) {
  return client.chat.completions.create(
    {
      model: "sim",
      messages: [
        { role: "user", content: "Tell me about owls" },
        { role: "assistant", content: answer },
        { role: "user", content: "And about crows?" },
      ],
    },
    { headers },
  );
}

describe("gateway conversations across a restart of the server", () => {
  it("an unnamed conversation goes on in its session after the server restarts", async () => {
    const answer = await opening(await start());
    const [session] = gatewaySessionIds();
    expect(markers(session as string)[0]?.details).toStrictEqual({
      session_id: session,
      answer: expect.any(String),
      opened_with: 1,
      opening: expect.any(String),
    });
    await stop();

    await followUp(await start(), answer);
    expect(gatewaySessionIds()).toStrictEqual([session]);
    expect(store().listTurns(session as string)).toHaveLength(2);
    // Each turn leaves its marker; the latest is the one a next request must repeat.
    expect(markers(session as string)).toHaveLength(2);
  });

  it("in dual_agent the restarted server's model still gets the conversation's history", async () => {
    const dual = { "X-Agent-Lab-Mode": "dual_agent" };
    const answer = await opening(await start(), dual);
    await stop();

    await followUp(await start(), answer, dual);
    const [session, ...others] = gatewaySessionIds();
    expect(others).toStrictEqual([]);
    const sent = store()
      .listAuditLogs(session as string)
      .filter((row) => row.event === "chat_agent_request")
      .map((row) => [row.turn_index, row.details.messages]);
    // The system prompt and the user message, then those, the answer and the next user message.
    expect(sent).toStrictEqual([
      [1, 2],
      [2, 4],
    ]);
  });

  it("a conversation whose latest marker is not one (an edited log) starts a new session", async () => {
    const answer = await opening(await start());
    const [session] = gatewaySessionIds();
    // The session's own marker with its count as text: taken as it is, it would still match (the
    // count coerces); a marker that is not one is passed over instead.
    const [written] = markers(session as string);
    store().appendAudit(session as string, {
      event: CONVERSATION_EVENT,
      details: { ...written?.details, opened_with: "1" },
    });
    await stop();

    await followUp(await start(), answer);
    expect(gatewaySessionIds()).toHaveLength(2);
    expect(store().listTurns(session as string)).toHaveLength(1);
  });

  it("a copy of the session imported under another id does not take the conversation after a restart", async () => {
    const answer = await opening(await start());
    const [session] = gatewaySessionIds();
    const copy = store().importSession(store().exportSession(session as string), {
      session_id: "copy-of-the-conversation",
    });
    // The copy, imported last, is the session updated last, and holds the same marker row.
    expect(markers(copy)).toHaveLength(1);
    await stop();

    await followUp(await start(), answer);
    expect(store().listTurns(session as string)).toHaveLength(2);
    expect(store().listTurns(copy)).toHaveLength(1);
  });

  it("a conversation read back after its gap has passed starts a new session", async () => {
    const answer = await opening(await start(300));
    const [session] = gatewaySessionIds();
    await stop();
    await new Promise((resolve) => setTimeout(resolve, 400));

    await followUp(await start(300), answer);
    expect(gatewaySessionIds()).toHaveLength(2);
    expect(store().listTurns(session as string)).toHaveLength(1);
  });

  it("a store that cannot be read back is reported, the request is served, and the next one reads again", async () => {
    const answer = await opening(await start());
    const [session] = gatewaySessionIds();
    await stop();

    let failures = 1;
    const client = await start(
      undefined,
      (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property === "listSessionPage" && failures > 0) {
              failures--;
              return () => {
                throw new Error("the disk is gone for a moment");
              };
            }
            const value = Reflect.get(target, property, receiver);
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
    );
    await followUp(client, answer);
    expect(logs.join("\n")).toContain("the disk is gone for a moment");
    expect(store().listTurns(session as string)).toHaveLength(1);
    expect(gatewaySessionIds()).toHaveLength(2);
    // Asked again: the conversation's marker is found this time.
    await followUp(client, answer);
    expect(store().listTurns(session as string)).toHaveLength(2);
  });

  it("a conversation the server answered since it started is matched by what it remembers", async () => {
    const client = await start();
    const answer = await opening(client);
    // The same server: nothing to read back, and the marker in memory is the one it wrote.
    await followUp(client, answer);
    const [session, ...others] = gatewaySessionIds();
    expect(others).toStrictEqual([]);
    expect(store().listTurns(session as string)).toHaveLength(2);
  });
});

describe("tool replies the restarted server has no turn waiting for", () => {
  const WEATHER = {
    type: "function" as const,
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    },
  };

  it("in pass-through go upstream as they are, as the session's next turn; on the sim, still a 409", async () => {
    const upstream = await FakeOpenAIServer.start();
    const serve = async () => {
      const store = new SqliteSessionStore(path);
      const server = await startServer({
        store,
        port: 0,
        webRoot: join(directory.path, "no-web-build"),
        log: (line) => logs.push(line),
        runTurnDefaults: fakeUpstreamDefaults(upstream.baseUrl),
      });
      running = { server, store };
      return new OpenAI({
        baseURL: new URL("/v1", server.url).href,
        apiKey: server.token as string,
        maxRetries: 0,
      });
    };
    try {
      const headers = { "X-Agent-Lab-Session": "resumed" };
      const asked = { role: "user" as const, content: "Weather in Rome?" };
      upstream.enqueue(
        streamReply(
          completionStream({
            toolCalls: [
              {
                index: 0,
                id: "call_r1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Rome"}' },
              },
            ],
          }),
        ),
      );
      let client = await serve();
      const first = await client.chat.completions.create(
        { model: "fake", messages: [asked], tools: [WEATHER] },
        { headers },
      );
      const call = first.choices[0]?.message.tool_calls?.[0];
      expect(call?.id).toBe("call_r1");
      // The lab restarts while the agent runs its tool.
      await stop();
      client = await serve();
      const followUp = [
        asked,
        { role: "assistant" as const, content: null, tool_calls: [call as never] },
        { role: "tool" as const, tool_call_id: "call_r1", content: "sunny, 24 C" },
      ];
      upstream.enqueue(streamReply(completionStream({ text: ["Sunny in Rome."] })));
      const second = await client.chat.completions.create(
        { model: "fake", messages: followUp, tools: [WEATHER] },
        { headers },
      );
      expect(second.choices[0]?.message.content).toBe("Sunny in Rome.");
      expect(upstream.requests[1]?.body).toMatchObject({ messages: followUp });
      await waitFor(() => store().listTurns("resumed")[1]?.status === "completed");
      expect(
        store()
          .listTurns("resumed")
          .map((turn) => turn.status),
      ).toEqual(["cancelled", "completed"]);
      expect(
        store()
          .listMessages("resumed")
          .filter((message) => message.turn_index === 2)
          .map((message) => [message.role, message.content]),
      ).toEqual([
        ["user", "Weather in Rome?"],
        ["assistant", "Sunny in Rome."],
      ]);

      // The sim's request is written from the session's history, which lacks these replies.
      const onSim = client.chat.completions.create({
        model: "sim",
        messages: [
          { role: "user", content: "Weather in Oslo?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_s1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_s1", content: "snow" },
        ],
        tools: [WEATHER],
      });
      await expect(onSim).rejects.toMatchObject({ status: 409, code: "no_waiting_turn" });
    } finally {
      await stop();
      await upstream.close();
    }
  });
});
