import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../test/fake-openai-server.js";
import type { SessionRecord } from "../domain/records.js";
import {
  parseSse,
  SLOW_SIM_CONFIG,
  type SseMessage,
  startTestServer,
  type TestServer,
  turnEventsOf,
  waitFor,
} from "./test-fixtures.js";

/** Issue 15, point 1: POST /api/sessions/:id/replay and /turns/:n/retry, through HTTP. */

type Event = { type: string } & Record<string, unknown>;
const eventsOf = (messages: SseMessage[]): Event[] =>
  messages.map((message) => {
    const event = JSON.parse(message.data) as Event;
    expect(event.type).toBe(message.event);
    return event;
  });
const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: string; message: string } }).error;

describe("HTTP API: replay a session's user messages under another config", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  const sessionWithTurns = async (config: Record<string, unknown>, messages: string[]) => {
    const id = lab.store.createSession({ title: "source", config });
    for (const message of messages) {
      const response = await lab.api(`/api/sessions/${id}/turns`, {
        method: "POST",
        json: { message },
      });
      await response.text();
    }
    return id;
  };
  const replay = (id: string, json: unknown, signal?: AbortSignal) =>
    lab.api(`/api/sessions/${id}/replay`, { method: "POST", json, ...(signal ? { signal } : {}) });

  it("runs each user message in order in a new session, framed by replay events", async () => {
    const messages = ["search for agent lab", "now search for vitest"];
    const source = await sessionWithTurns({ tool_invocation_mode: "dual_agent" }, messages);
    const response = await replay(source, { config: { tool_invocation_mode: "chat_agent_tools" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = eventsOf(parseSse(await response.text()));
    const first = events[0] as Event & { session_id: string };
    expect(first).toStrictEqual({
      type: "replay",
      session_id: first.session_id,
      source_session_id: source,
      turns: 2,
    });
    const replayed = first.session_id;
    expect(events.filter((event) => event.type.startsWith("replay"))).toStrictEqual([
      first,
      { type: "replay_turn", turn_index: 1, of: 2 },
      { type: "replay_turn", turn_index: 2, of: 2 },
      { type: "replay_done", session_id: replayed, statuses: ["completed", "completed"] },
    ]);
    // Each replay_turn is followed by that turn's own events, turn_start first.
    const opened = events.flatMap((event, at) =>
      event.type === "replay_turn" ? [events[at + 1]] : [],
    );
    expect(opened.map((event) => [event?.type, event?.turn_index, event?.mode])).toStrictEqual([
      ["turn_start", 1, "chat_agent_tools"],
      ["turn_start", 2, "chat_agent_tools"],
    ]);

    const session = lab.store.getSession(replayed) as SessionRecord;
    expect(session.title).toBe("source (replay)");
    expect(session.config).toMatchObject({
      tool_invocation_mode: "chat_agent_tools",
      derived_from: { kind: "replay", session_id: source, turn_index: 0 },
      tags: ["replay"],
    });
    expect(
      lab.store.listTurns(replayed).map((turn) => [turn.user_message, turn.status]),
    ).toStrictEqual(messages.map((message) => [message, "completed"]));
    expect(lab.store.listTurns(source)).toHaveLength(2);
  });

  it("refuses before streaming, as JSON, and stores nothing", async () => {
    const empty = lab.store.createSession({ title: "empty", config: {} });
    const source = await sessionWithTurns({}, ["hi"]);
    const before = lab.store.listSessions().length;

    const unknown = await replay("nope", {});
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe("session_not_found");
    const nothing = await replay(empty, {});
    expect(nothing.status).toBe(400);
    expect((await errorOf(nothing)).message).toBe(
      `session ${empty} has no finished turns to replay`,
    );
    const bad = await replay(source, { config: { chat_agent: { temperature: 9 } } });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toMatch(
      /^request body: config\.chat_agent\.temperature: /,
    );
    const extra = await replay(source, { turn_index: 1 });
    expect(extra.status).toBe(400);
    expect((await errorOf(extra)).message).toContain("turn_index");
    expect(lab.store.listSessions()).toHaveLength(before);
  });

  it("a client that disconnects cancels the running turn and stops the replay; what ran is kept", async () => {
    const source = await sessionWithTurns({}, ["one", "two", "three"]);
    const controller = new AbortController();
    const response = await replay(
      source,
      { config: SLOW_SIM_CONFIG as unknown as Record<string, unknown> },
      controller.signal,
    );
    const reader = response.body?.getReader();
    let text = "";
    while (!text.includes("event: text_delta")) {
      const chunk = await reader?.read();
      if (chunk === undefined || chunk.done) throw new Error("the stream ended early");
      text += new TextDecoder().decode(chunk.value);
    }
    controller.abort();
    const replayed = String(
      eventsOf(parseSse(text.slice(0, text.indexOf("\n\n") + 2)))[0]?.session_id,
    );
    await waitFor(() => lab.store.listTurns(replayed)[0]?.status === "cancelled");
    // Once the server lets go of the session (the replay stopped), it takes a turn of its own:
    // the source's second message was never sent.
    const postAfter = () =>
      lab.api(`/api/sessions/${replayed}/turns`, { method: "POST", json: { message: "after" } });
    let after = await postAfter();
    while (after.status === 409) {
      await after.body?.cancel();
      after = await postAfter();
    }
    expect(after.status).toBe(200);
    await after.text();
    expect(
      lab.store.listTurns(replayed).map((turn) => [turn.user_message, turn.status]),
    ).toStrictEqual([
      ["one", "cancelled"],
      ["after", "completed"],
    ]);
  });
});

describe("HTTP API: retry a turn that did not complete", () => {
  let endpoint: FakeOpenAIServer;
  let lab: TestServer;
  beforeEach(async () => {
    vi.stubEnv("LAB_RETRY_KEY", "test-key");
    endpoint = await FakeOpenAIServer.start();
    lab = await startTestServer();
  });
  afterEach(async () => {
    await lab.close();
    await endpoint.close();
    vi.unstubAllEnvs();
  });

  const openaiSession = () =>
    lab.store.createSession({
      title: "t",
      config: {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: {
          model: "openai:gpt-test",
          base_url: endpoint.baseUrl,
          api_key_env: "LAB_RETRY_KEY",
          options: { max_retries: 0 },
        },
      },
    });
  // Every POST is JSON (the server's cross-origin guard); a retry takes an empty object.
  const post = (path: string, json: unknown = {}) => lab.api(path, { method: "POST", json });

  it("runs a failed turn's message as a new turn and keeps the failed one", async () => {
    const id = openaiSession();
    endpoint.enqueue(errorReply(400, "the endpoint refused"));
    const failed = turnEventsOf(
      await (await post(`/api/sessions/${id}/turns`, { message: "hi there" })).text(),
    );
    expect(failed.at(-1)).toMatchObject({ type: "turn_end", status: "failed" });

    endpoint.enqueue(streamReply(completionStream({ text: ["Hello!"] })));
    const response = await post(`/api/sessions/${id}/turns/1/retry`);
    expect(response.status).toBe(200);
    const events = turnEventsOf(await response.text());
    expect(events[0]).toMatchObject({ type: "turn_start", session_id: id, turn_index: 2 });
    expect(events.at(-1)).toMatchObject({
      type: "turn_end",
      status: "completed",
      answer: "Hello!",
    });
    expect(
      lab.store.listTurns(id).map((turn) => [turn.turn_index, turn.user_message, turn.status]),
    ).toStrictEqual([
      [1, "hi there", "failed"],
      [2, "hi there", "completed"],
    ]);
    // The endpoint was sent the retried message as the turn's user message.
    const sent = endpoint.requests.at(-1)?.body as {
      messages: { role: string; content: string }[];
    };
    expect(sent.messages.at(-1)).toMatchObject({ role: "user", content: "hi there" });

    // A replay sends the retried message once: the failed attempt is not part of the conversation.
    endpoint.enqueue(streamReply(completionStream({ text: ["Hello again!"] })));
    const replayed = eventsOf(parseSse(await (await post(`/api/sessions/${id}/replay`)).text()));
    expect(replayed[0]).toMatchObject({ type: "replay", turns: 1 });
    expect(replayed.at(-1)).toMatchObject({ type: "replay_done", statuses: ["completed"] });

    const again = await post(`/api/sessions/${id}/turns/2/retry`);
    expect(again.status).toBe(409);
    expect(await errorOf(again)).toStrictEqual({
      code: "turn_not_retryable",
      message: `turn 2 of session ${id} is completed: only a failed, cancelled, interrupted, max_rounds turn can be retried`,
    });
  });

  it("refuses an unknown session or turn and a turn index that is not one", async () => {
    const id = lab.store.createSession({ title: "t", config: {} });
    const unknownSession = await post("/api/sessions/nope/turns/1/retry");
    expect(unknownSession.status).toBe(404);
    expect((await errorOf(unknownSession)).code).toBe("session_not_found");
    const unknownTurn = await post(`/api/sessions/${id}/turns/3/retry`);
    expect(unknownTurn.status).toBe(404);
    expect((await errorOf(unknownTurn)).code).toBe("turn_not_found");
    for (const index of ["abc", "0", "1.5"]) {
      const bad = await post(`/api/sessions/${id}/turns/${index}/retry`);
      expect(bad.status, index).toBe(400);
      expect((await errorOf(bad)).message, index).toMatch(/^path: turn_index: /);
    }
  });
});
