import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeOpenAIServer } from "../../test/fake-openai-server.js";
import {
  answerRound,
  fakeServerModel,
  requestMessages,
} from "../../test/runtime/scripted-turns.js";
import {
  assertStrictHistory,
  type HistoryMessage,
  strictHistoryProblems,
} from "../../test/runtime/strict-history.js";
import {
  collectTurn,
  completedTurn,
  MODES,
  openTemporaryStore,
  RecordingModel,
  type TemporaryStore,
} from "../../test/runtime/turn-harness.js";
import type { ChatMessageInput } from "../domain/messages.js";
import type { ToolInvocationMode } from "../domain/session-config.js";
import type { ChatModelPart, ChatModelRequest, StreamOptions } from "../providers/chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { loadHistory } from "./history.js";

const call = (id: string) => ({ id, name: "mock_search", arguments: {}, raw_arguments: "{}" });
const user = (content: string): ChatMessageInput => ({ role: "user", content });
const assistant = (content: string, ...ids: string[]): ChatMessageInput => ({
  role: "assistant",
  content,
  tool_calls: ids.map(call),
});
const reply = (id: string): ChatMessageInput => ({
  role: "tool",
  content: `{"for":"${id}"}`,
  tool_call_id: id,
  name: "mock_search",
});

describe("assertStrictHistory", () => {
  const ok: HistoryMessage[] = [
    { role: "system" },
    { role: "user" },
    { role: "assistant", tool_calls: [{ id: "a" }, { id: "b" }] },
    { role: "tool", tool_call_id: "b" },
    { role: "tool", tool_call_id: "a" },
    { role: "assistant", tool_calls: [] },
    { role: "user", tool_call_id: null, tool_calls: null },
  ];

  it("accepts a history where every call is answered right after it", () => {
    expect(strictHistoryProblems(ok)).toEqual([]);
    expect(() => assertStrictHistory(ok)).not.toThrow();
  });

  it("names every way a strict endpoint would refuse a history", () => {
    expect(
      strictHistoryProblems([
        { role: "assistant", tool_calls: [{ id: "a" }, { id: "b" }] },
        { role: "tool", tool_call_id: "a" },
        { role: "user" },
        { role: "tool", tool_call_id: "b" },
        { role: "assistant", tool_calls: [{ id: "c" }, { id: "c" }] },
        { role: "tool", tool_call_id: "c" },
        { role: "tool", tool_call_id: "c" },
        { role: "tool" },
      ]),
    ).toEqual([
      "message 0: tool call(s) b have no reply before the next message",
      "message 3: tool reply b answers no open tool call",
      "message 4: tool call id c repeated",
      "message 6: tool call c is answered twice",
      "message 7: a tool reply without a tool_call_id",
    ]);
    expect(() => assertStrictHistory([{ role: "assistant", tool_calls: [{ id: "x" }] }])).toThrow(
      /x have no reply[\s\S]*history: assistant\(x\)/,
    );
  });
});

describe("loadHistory", () => {
  let lab: TemporaryStore;
  beforeEach(() => {
    lab = openTemporaryStore();
  });
  afterEach(() => {
    lab.dispose();
  });

  /** A history an older lab wrote message by message: a lost reply mid-way, a stray reply. */
  function writeLegacyHistory(sessionId: string, mode: ToolInvocationMode): void {
    const { store } = lab;
    store.createSession({
      session_id: sessionId,
      title: "legacy",
      config: { tool_invocation_mode: mode },
    });
    const turns: ChatMessageInput[][] = [
      [user("search two things"), assistant("", "a", "b"), reply("a"), assistant("done")],
      [user("and again"), reply("nobody-asked"), assistant("", "a"), reply("a"), assistant("ok")],
    ];
    turns.forEach((messages, index) => {
      const turn_index = index + 1;
      store.startTurn(sessionId, { turn_index, user_message: String(messages[0]?.content) });
      for (const message of messages) store.appendMessage(sessionId, { turn_index, message });
      store.completeTurn(sessionId, { turn_index, wall_time_ms: 1 });
    });
  }

  it("answers a lost call right after it, leaves out a stray reply, and repairs only once", async () => {
    writeLegacyHistory("legacy", "chat_agent_tools");
    const history = await loadHistory(lab.store, "legacy");
    assertStrictHistory(history);
    expect(history.map((message) => message.tool_call_id ?? message.role)).toEqual([
      "user",
      "assistant",
      "a",
      "b",
      "assistant",
      "user",
      "assistant",
      "a",
      "assistant",
    ]);
    expect(history[2]?.content).toBe('{"for":"a"}');
    expect(history[3]?.content).toMatch(/interrupted/);
    // The repair is stored (at the end of the file) and audited, once.
    expect(lab.store.listMessages("legacy").at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: "b",
      turn_index: 1,
    });
    expect(await loadHistory(lab.store, "legacy")).toEqual(history);
    const repairs = lab.store.listAuditLogs("legacy").filter((e) => e.event === "history_repaired");
    expect(repairs).toMatchObject([{ turn_index: 1, details: { tool_call_ids: ["b"] } }]);
  });

  it("never lets a late reply answer a call: interrupted in place, the late result kept but not sent", async () => {
    const { store } = lab;
    store.createSession({ session_id: "late", title: "late", config: {} });
    const turns: ChatMessageInput[][] = [
      [user("search"), assistant("", "a")],
      // The tool finished after the user had moved on: its result is stored after turn 2's user.
      [user("never mind"), { ...reply("a"), content: '{"late":true}' }, assistant("fine")],
    ];
    turns.forEach((messages, index) => {
      const turn_index = index + 1;
      store.startTurn("late", { turn_index, user_message: String(messages[0]?.content) });
      for (const message of messages) store.appendMessage("late", { turn_index, message });
      store.completeTurn("late", { turn_index, wall_time_ms: 1 });
    });
    const stored = store.listMessages("late");

    const history = await loadHistory(store, "late");
    assertStrictHistory(history);
    expect(history.map((message) => message.tool_call_id ?? message.role)).toEqual([
      "user",
      "assistant",
      "a",
      "user",
      "assistant",
    ]);
    expect(history[2]?.content).toMatch(/interrupted/);
    expect(history.some((message) => message.content.includes("late"))).toBe(false);
    // The record keeps the late result and gains no second reply to `a`.
    expect(store.listMessages("late")).toEqual(stored);
    expect(await loadHistory(store, "late")).toEqual(history);
  });

  it("sends a reply stored after the next assistant message of its turn as interrupted too", async () => {
    const { store } = lab;
    store.createSession({ session_id: "moved-on", title: "moved on", config: {} });
    store.startTurn("moved-on", { turn_index: 1, user_message: "go" });
    for (const message of [
      user("go"),
      assistant("", "a", "b"),
      reply("a"),
      assistant("x"),
      reply("b"),
    ])
      store.appendMessage("moved-on", { turn_index: 1, message });
    store.completeTurn("moved-on", { turn_index: 1, wall_time_ms: 1 });
    const history = await loadHistory(store, "moved-on");
    assertStrictHistory(history);
    expect(history.map((message) => message.content)).toEqual([
      "go",
      "",
      '{"for":"a"}',
      expect.stringMatching(/interrupted/),
      "x",
    ]);
  });

  it("imports a document with a late reply as it is, and its next turn is one a strict endpoint accepts", async () => {
    const { store } = lab;
    store.createSession({
      session_id: "source",
      title: "late",
      config: { tool_invocation_mode: "chat_agent_tools" },
    });
    store.startTurn("source", { turn_index: 1, user_message: "search" });
    store.appendMessage("source", { turn_index: 1, message: user("search") });
    store.appendMessage("source", { turn_index: 1, message: assistant("", "a") });
    store.completeTurn("source", { turn_index: 1, wall_time_ms: 1, status: "cancelled" });
    store.startTurn("source", { turn_index: 2, user_message: "again" });
    for (const message of [
      user("again"),
      { ...reply("a"), content: '{"late":true}' },
      assistant("ok"),
    ])
      store.appendMessage("source", { turn_index: 2, message });
    store.completeTurn("source", { turn_index: 2, wall_time_ms: 1 });
    const document = JSON.parse(JSON.stringify(store.exportSession("source"))) as unknown;

    expect(store.importSession(document, { session_id: "copy" })).toBe("copy");
    const imported = store.listMessages("copy").map((m) => m.tool_call_id ?? m.role);
    expect(imported).toEqual(["user", "assistant", "user", "a", "assistant"]);

    const server = await FakeOpenAIServer.start();
    try {
      server.enqueue(answerRound("Done."));
      await completedTurn({
        store,
        session_id: "copy",
        message: "and now?",
        models: { chat: fakeServerModel(server) },
      });
      const sent = requestMessages(server, 0);
      assertStrictHistory(sent);
      expect(sent.map((m) => m.tool_call_id ?? m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "a",
        "user",
        "assistant",
        "user",
      ]);
      expect(sent[3]?.content).toMatch(/interrupted/);
      expect(JSON.stringify(sent)).not.toContain("late");
      // The late result is still in the record, where the document had it.
      expect(store.listMessages("copy").map((m) => m.content)).toContain('{"late":true}');
    } finally {
      await server.close();
    }
  });

  it.each(MODES)(
    "lets a %s turn run on a repaired legacy session with a strict history",
    async (mode) => {
      writeLegacyHistory("legacy", mode);
      const chat = new RecordingModel(new SimChatModel());
      const end = await completedTurn({
        store: lab.store,
        session_id: "legacy",
        message: "search for sqlite wal mode",
        models: { chat },
      });
      expect(end.turn_index).toBe(3);
      for (const request of chat.requests) assertStrictHistory(request.messages);
      if (mode === "chat_agent_tools") {
        expect(chat.requests[0]?.messages.map((m) => m.tool_call_id ?? m.role).slice(0, 6)).toEqual(
          ["system", "user", "assistant", "a", "b", "assistant"],
        );
      }
    },
  );
});

/** The sim, after `failures` calls that fail (or, with `hang`, wait until the turn is cancelled). */
class FailingFirstModel extends RecordingModel {
  #failures: number;
  constructor(
    failures: number,
    private readonly hang = false,
  ) {
    super(new SimChatModel({}));
    this.#failures = failures;
  }
  override stream(
    request: ChatModelRequest,
    options?: StreamOptions,
  ): AsyncIterable<ChatModelPart> {
    if (this.#failures <= 0) return super.stream(request, options);
    this.#failures--;
    this.requests.push(structuredClone(request));
    const hang = this.hang;
    return (async function* () {
      if (!hang) throw new Error("the endpoint is down");
      await new Promise((_, reject) =>
        options?.signal?.addEventListener("abort", () => reject(options.signal?.reason)),
      );
    })();
  }
}

describe("a message sent again after its turn got no answer", () => {
  let lab: TemporaryStore;
  beforeEach(() => {
    lab = openTemporaryStore();
  });
  afterEach(() => {
    lab.dispose();
  });

  const usersSent = (model: RecordingModel, index: number) =>
    (model.requests[index]?.messages ?? []).filter((m) => m.role === "user").map((m) => m.content);

  it.each(MODES)(
    "%s: after a failed turn, the model is sent it once; the record keeps both",
    async (mode) => {
      const model = new FailingFirstModel(1);
      const turn = (message: string) =>
        collectTurn({
          store: lab.store,
          session_id: "again",
          message,
          config: { tool_invocation_mode: mode, tools: [] },
          models: { chat: model, event: model },
        });
      expect((await turn("what is WAL mode?")).end?.status).toBe("failed");
      expect((await turn("what is WAL mode?")).end?.status).toBe("completed");
      expect(usersSent(model, 1)).toEqual(["what is WAL mode?"]);
      const stored = lab.store.listMessages("again").filter((m) => m.role === "user");
      expect(stored.map((m) => m.turn_index)).toEqual([1, 2]);
      // Another message after the failure is a message of its own: both are sent.
      expect((await turn("and journal mode?")).end?.status).toBe("completed");
      expect(usersSent(model, 2)).toEqual(["what is WAL mode?", "and journal mode?"]);
    },
  );

  it.each(MODES)(
    "%s: read back from the file by another process, the history sends it once too",
    async (mode) => {
      const model = new FailingFirstModel(1);
      const turn = (store: SqliteSessionStore) =>
        collectTurn({
          store,
          session_id: "elsewhere",
          message: "what is WAL mode?",
          config: { tool_invocation_mode: mode, tools: [] },
          models: { chat: model, event: model },
        });
      expect((await turn(lab.store)).end?.status).toBe("failed");
      // Another store on the file: nothing kept in memory, the history is read from the rows.
      const other = new SqliteSessionStore(lab.path);
      try {
        expect((await turn(other)).end?.status).toBe("completed");
        expect(await loadHistory(other, "elsewhere")).toMatchObject([
          { role: "user", content: "what is WAL mode?" },
          { role: "assistant" },
        ]);
      } finally {
        other.close();
      }
      expect(usersSent(model, 1)).toEqual(["what is WAL mode?"]);
    },
  );

  it("after a turn cancelled before its answer (the history this process kept), it is sent once", async () => {
    const model = new FailingFirstModel(1, true);
    const cancel = new AbortController();
    const turn = (signal?: AbortSignal) =>
      collectTurn({
        store: lab.store,
        session_id: "kept",
        message: "summarise the log",
        config: { tool_invocation_mode: "chat_agent_tools", tools: [] },
        models: { chat: model, event: model },
        ...(signal === undefined ? {} : { signal }),
      });
    const first = turn(cancel.signal);
    await vi.waitFor(() => expect(model.requests).toHaveLength(1));
    cancel.abort(new Error("the user stopped it"));
    expect((await first).end?.status).toBe("cancelled");
    expect((await turn()).end?.status).toBe("completed");
    expect(usersSent(model, 1)).toEqual(["summarise the log"]);
  });

  it("an answered message asked again is sent twice: the model answered the first", async () => {
    const model = new RecordingModel(new SimChatModel({}));
    for (let index = 0; index < 2; index++) {
      const { end } = await collectTurn({
        store: lab.store,
        session_id: "twice",
        message: "tell me a joke",
        config: { tool_invocation_mode: "chat_agent_tools", tools: [] },
        models: { chat: model, event: model },
      });
      expect(end?.status).toBe("completed");
    }
    expect(usersSent(model, 1)).toEqual(["tell me a joke", "tell me a joke"]);
  });
});
