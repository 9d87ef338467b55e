import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  completedTurn,
  MODES,
  openTemporaryStore,
  RecordingModel,
  type TemporaryStore,
} from "../../test/runtime/turn-harness.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import type { SessionStore } from "../store/session-store.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

/** The store, counting the calls that read a session's whole history. */
function counting(store: SessionStore): { store: SessionStore; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property === "listMessages") {
        return (...args: unknown[]) => {
          reads++;
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
  return { store: proxy, reads: () => reads };
}

/** The conversation a request sends, without the system message (it is the same each round). */
const sent = (model: RecordingModel) =>
  (model.requests.at(-1)?.messages ?? []).filter((message) => message.role !== "system");

describe.each(MODES)("the history kept between turns, %s", (mode) => {
  let temporary: TemporaryStore;
  beforeEach(() => {
    temporary = openTemporaryStore();
    temporary.store.createSession({
      title: "s",
      session_id: "s",
      config: { tool_invocation_mode: mode },
    });
  });
  afterEach(() => temporary.dispose());

  it("the next turn of this process reads no history from the store, and sends what a read would", async () => {
    temporary.store.createSession({
      title: "fresh",
      session_id: "fresh",
      config: { tool_invocation_mode: mode },
    });
    const messages = ["search for sqlite wal mode", "search for keyset pagination", "thanks"];
    const { store, reads } = counting(temporary.store);
    const kept = new RecordingModel(new SimChatModel());
    const read = new RecordingModel(new SimChatModel());
    for (const message of messages) {
      await completedTurn({ store, session_id: "s", message, models: { chat: kept, event: kept } });
      // A new wrapper each turn is another store to the runtime: it keeps nothing for it.
      await completedTurn({
        store: counting(temporary.store).store,
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

  /**
   * A turn of this process, `between` (a write by someone else), another turn of this process:
   * what the second turn's last request sent, and how often the whole history was read.
   */
  async function aroundAWrite(between: () => Promise<void>) {
    const { store, reads } = counting(temporary.store);
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
      temporary.store.appendMessage("s", {
        turn_index: 1,
        message: { role: "assistant", content: "a note written by hand" },
      });
    });
    expect(seen.reads).toBe(2);
    expect(seen.sent).toContain("a note written by hand");
  });

  it("a turn run by another store (another process) between two turns of this one is read from the store", async () => {
    const seen = await aroundAWrite(async () => {
      // The same file through another connection: its turn moves the turn index.
      const elsewhere = new SqliteSessionStore(temporary.path);
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
