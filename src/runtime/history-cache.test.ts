import { describe, expect, it } from "vitest";
import {
  collectTurn,
  completedTurn,
  countingCalls,
  MODES,
  RecordingModel,
  useSessionStore,
} from "../../test/runtime/turn-harness.js";
import type { ChatModel } from "../providers/chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import type { SessionStore } from "../store/session-store.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { createMockTicketTool } from "../tools/builtin/index.js";

/** The store, counting the calls that read a session's whole history. */
function counting(store: SessionStore): { store: SessionStore; reads: () => number } {
  const counted = countingCalls(store, "listMessages");
  return { store: counted.store, reads: counted.count };
}

/** Turns of session "s" through `store`, each `extra` added to its options, one recorded model. */
function turnsOf(store: SessionStore) {
  const chat = new RecordingModel(new SimChatModel());
  const turn = (message: string, extra: Partial<Parameters<typeof completedTurn>[0]> = {}) =>
    completedTurn({ store, session_id: "s", message, models: { chat, event: chat }, ...extra });
  return { chat, turn };
}

/** The conversation a request sends, without the system message (it is the same each round). */
const sent = (model: RecordingModel) =>
  (model.requests.at(-1)?.messages ?? []).filter((message) => message.role !== "system");

describe.each(MODES)("the history kept between turns, %s", (mode) => {
  const current = useSessionStore(mode);

  it("the next turn of this process reads no history from the store, and sends what a read would", async () => {
    current().store.createSession({
      title: "fresh",
      session_id: "fresh",
      config: { tool_invocation_mode: mode },
    });
    const messages = ["search for sqlite wal mode", "search for keyset pagination", "thanks"];
    const { store, reads } = counting(current().store);
    const kept = new RecordingModel(new SimChatModel());
    const read = new RecordingModel(new SimChatModel());
    for (const message of messages) {
      await completedTurn({ store, session_id: "s", message, models: { chat: kept, event: kept } });
      // A new wrapper each turn is another store to the runtime: it keeps nothing for it.
      await completedTurn({
        store: counting(current().store).store,
        session_id: "fresh",
        message,
        models: { chat: read, event: read },
      });
    }
    expect(reads()).toBe(1);
    expect(kept.requests.length).toBeGreaterThan(messages.length);
    expect(kept.requests.map((request) => request.messages)).toEqual(
      read.requests.map((request) => request.messages),
    );
  });

  it("a failed turn keeps nothing: the next turn sends what a read from the store gives", async () => {
    current().store.createSession({
      title: "fresh",
      session_id: "fresh",
      config: { tool_invocation_mode: mode },
    });
    // The model fails the turn whose message is "fail here", after its user message is stored
    // (and, in this process, pushed onto the history the cache handed over).
    const failing = (inner: RecordingModel): ChatModel => ({
      provider: inner.provider,
      model: inner.model,
      simulated: inner.simulated,
      stream(request, options) {
        const stream = inner.stream(request, options);
        const last = request.messages.filter((message) => message.role === "user").at(-1);
        if (last?.content !== "fail here") return stream;
        return (async function* () {
          yield* [];
          throw new Error("the model failed");
        })();
      },
    });
    const { store } = counting(current().store);
    const kept = new RecordingModel(new SimChatModel());
    const read = new RecordingModel(new SimChatModel());
    for (const message of ["search for sqlite wal mode", "fail here", "thanks"]) {
      const failed = message === "fail here";
      const here = await collectTurn({
        store,
        session_id: "s",
        message,
        models: { chat: failing(kept), event: failing(kept) },
      });
      const there = await collectTurn({
        store: counting(current().store).store,
        session_id: "fresh",
        message,
        models: { chat: failing(read), event: failing(read) },
      });
      expect(
        here.end?.status,
        JSON.stringify(
          here.events.filter((event) => event.type === "turn_end" || event.type === "error"),
        ),
      ).toBe(failed ? "failed" : "completed");
      expect(there.end?.status).toBe(here.end?.status);
    }
    // The third turn's requests are the same either way: "fail here" as often as the store has it.
    expect(sent(kept)).toEqual(sent(read));
    expect(sent(kept).filter((message) => message.content === "fail here")).toHaveLength(
      current()
        .store.listMessages("s")
        .filter((message) => message.content === "fail here").length,
    );
  });

  /**
   * A turn of this process, `between` (a write by someone else), another turn of this process:
   * what the second turn's last request sent, and how often the whole history was read.
   */
  async function aroundAWrite(between: () => Promise<void>) {
    const { store, reads } = counting(current().store);
    const chat = new RecordingModel(new SimChatModel());
    const turn = (message: string) =>
      completedTurn({ store, session_id: "s", message, models: { chat, event: chat } });
    await turn("hello");
    await between();
    await turn("again");
    return { reads: reads(), sent: sent(chat).map((message) => message.content) };
  }

  it("a write to the session between turns (here by hand) is read from the store", async () => {
    const seen = await aroundAWrite(async () => {
      // A later millisecond than the turn's end: updated_at is what tells the write apart.
      await new Promise((resolve) => setTimeout(resolve, 5));
      current().store.appendMessage("s", {
        turn_index: 1,
        message: { role: "assistant", content: "a note written by hand" },
      });
    });
    expect(seen.reads).toBe(2);
    expect(seen.sent).toContain("a note written by hand");
  });

  it("a session imported over itself with an edited message, its updated_at the same, is read from the store", async () => {
    const seen = await aroundAWrite(async () => {
      // The user fixes a message in an export and imports it over the session: the document's
      // timestamps are kept, the same updated_at the first turn left.
      const { store } = current();
      const document = store.exportSession("s");
      store.deleteSession("s");
      store.importSession({
        ...document,
        messages: document.messages.map((message) =>
          message.role === "user" ? { ...message, content: "hello, edited" } : message,
        ),
      });
      expect(store.getSession("s")?.updated_at).toBe(document.session.updated_at);
    });
    expect(seen.reads).toBe(2);
    expect(seen.sent).toContain("hello, edited");
    expect(seen.sent).not.toContain("hello");
  });

  it("a session made anew under its id with another config between turns runs on the new config", async () => {
    const { chat, turn } = turnsOf(current().store);
    await turn("hello");
    const { config } = current().store.getSession("s") ?? {};
    // Deleted and made again by someone else: its updated_at may even be the same, its
    // incarnation is new, and the config this process kept from the first turn is not its.
    current().store.deleteSession("s");
    current().store.createSession({
      title: "again",
      session_id: "s",
      config: { ...config, tool_invocation_mode: mode, tools: ["mock_ticket"], max_rounds: 2 },
    });
    await turn("open a ticket for it");
    const start = current()
      .store.listAuditLogs("s")
      .find((entry) => entry.event === "turn_start");
    expect(start?.details).toMatchObject({ tools: ["mock_ticket"], max_rounds: 2 });
    // The new session's history starts with this turn: nothing of the first session's.
    const contents = sent(chat).map((message) => message.content);
    expect(contents[0]).toBe("open a ticket for it");
    expect(contents).not.toContain("hello");
    const tools = (chat.requests.at(-1)?.tools ?? []).map((tool) => tool.name);
    if (mode === "chat_agent_tools") expect(tools).toEqual(["mock_ticket"]);
  });

  it("the next turn of this process claims the session as it was left, without reading it first", async () => {
    const configs = countingCalls(current().store, "getStoredSessionConfig");
    const { chat, turn } = turnsOf(configs.store);
    await turn("hello");
    const first = configs.count();
    await turn("again");
    await turn("and again");
    expect(configs.count()).toBe(first);
    // Written since (by hand, a later millisecond): the claim refuses, the turn reads the session.
    await new Promise((resolve) => setTimeout(resolve, 5));
    current().store.appendMessage("s", {
      turn_index: 3,
      message: { role: "assistant", content: "a note written by hand" },
    });
    await turn("once more");
    expect(configs.count()).toBe(first + 1);
    expect(sent(chat).map((message) => message.content)).toContain("a note written by hand");
    expect(
      current()
        .store.listTurns("s")
        .map((turn) => turn.status),
    ).toEqual(["completed", "completed", "completed", "completed"]);
  });

  it("a session deleted between turns is made anew by the next turn, titled from its message", async () => {
    const { store } = current();
    const { turn } = turnsOf(store);
    await turn("hello");
    store.deleteSession("s");
    // Asking for the mode the session had, and then for another one: made anew either way.
    await turn("start over", { config: { tool_invocation_mode: mode } });
    expect(store.getSession("s")?.title).toBe("start over");
    await turn("and go on");
    store.deleteSession("s");
    const other = mode === "dual_agent" ? "chat_agent_tools" : "dual_agent";
    await turn("in the other mode", { config: { tool_invocation_mode: other } });
    expect(store.getSession("s")).toMatchObject({
      title: "in the other mode",
      tool_invocation_mode: other,
    });
    expect(store.listTurns("s").map((entry) => entry.user_message)).toEqual(["in the other mode"]);
  });

  it("a session made anew with a config this process can no longer prepare falls back to the stored one", async () => {
    const { store } = current();
    const { turn } = turnsOf(store);
    await turn("search for wal mode");
    store.deleteSession("s");
    store.createSession({
      title: "again",
      session_id: "s",
      config: { tool_invocation_mode: mode, tools: ["mock_ticket"] },
    });
    // The kept config names mock_search, which these providers no longer have: preparing it
    // fails, and the turn goes on from the session as stored.
    const end = await turn("open a ticket", { tools: [createMockTicketTool()] });
    expect(end.turn_index).toBe(1);
    const start = store.listAuditLogs("s").find((entry) => entry.event === "turn_start");
    expect(start?.details).toMatchObject({ tools: ["mock_ticket"] });
  });

  it("a turn run by another store (another process) between two turns of this one is read from the store", async () => {
    const seen = await aroundAWrite(async () => {
      // The same file through another connection: its turn moves the turn index.
      const elsewhere = new SqliteSessionStore(current().path);
      try {
        await completedTurn({ store: elsewhere, session_id: "s", message: "from elsewhere" });
      } finally {
        elsewhere.close();
      }
    });
    expect(seen.reads).toBe(2);
    expect(seen.sent).toContain("from elsewhere");
  });
});
