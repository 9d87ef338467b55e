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

/** The store, counting the reads of a whole session record. */
function counting(store: SessionStore): { store: SessionStore; records: () => number } {
  let records = 0;
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property !== "getSession") return value.bind(target);
      return (...args: unknown[]) => {
        records++;
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, records: () => records };
}

const PIRATE = "Answer like a pirate.";

describe.each(MODES)("a turn's config, read as its stored text (%s)", (mode) => {
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

  const systemPrompt = (model: RecordingModel) =>
    model.requests.at(-1)?.messages.find((message) => message.role === "system")?.content;

  it("is read without the session's record, and parsed once for every turn of the session", async () => {
    const { store, records } = counting(temporary.store);
    const chat = new RecordingModel(new SimChatModel());
    for (const message of ["one", "two", "three", "four"]) {
      await completedTurn({ store, session_id: "s", message, models: { chat, event: chat } });
    }
    expect(records()).toBe(0);
    expect(temporary.store.listTurns("s")).toHaveLength(4);
  });

  it("follows a session made anew under the same id, or imported over with another config and the same timestamps", async () => {
    const chat = new RecordingModel(new SimChatModel());
    const turn = (message: string) =>
      completedTurn({
        store: temporary.store,
        session_id: "s",
        message,
        models: { chat, event: chat },
      });
    await turn("hello");
    expect(systemPrompt(chat)).not.toContain(PIRATE);

    temporary.store.deleteSession("s");
    temporary.store.createSession({
      title: "s again",
      session_id: "s",
      config: { tool_invocation_mode: mode, chat_agent: { system_prompt: PIRATE } },
    });
    await turn("hello again");
    expect(systemPrompt(chat)).toContain(PIRATE);

    // The same document back with another prompt: created_at and updated_at are the document's.
    const document = temporary.store.exportSession("s");
    temporary.store.deleteSession("s");
    const config = { ...document.session.config, chat_agent: { system_prompt: "Be terse." } };
    temporary.store.importSession({ ...document, session: { ...document.session, config } });
    await turn("and now?");
    expect(systemPrompt(chat)).toContain("Be terse.");
    expect(systemPrompt(chat)).not.toContain(PIRATE);
  });

  it("a stored config that is not JSON is refused by name, as the record's read refuses it", async () => {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(temporary.path);
    db.prepare("UPDATE sessions SET config_json = '{not json' WHERE id = 's'").run();
    db.close();
    const turn = completedTurn({ store: temporary.store, session_id: "s", message: "hi" });
    await expect(turn).rejects.toThrow(/session s config/);
    expect(temporary.store.listTurns("s")).toEqual([]);
  });
});
