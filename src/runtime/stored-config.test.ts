import { describe, expect, it } from "vitest";
import {
  completedTurn,
  countingCalls,
  MODES,
  RecordingModel,
  useSessionStore,
} from "../../test/runtime/turn-harness.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";

const PIRATE = "Answer like a pirate.";

describe.each(MODES)("a turn's config, read as its stored text (%s)", (mode) => {
  const current = useSessionStore(mode);

  const systemPrompt = (model: RecordingModel) =>
    model.requests.at(-1)?.messages.find((message) => message.role === "system")?.content;

  it("is read without the session's record, and parsed once for every turn of the session", async () => {
    const { store, count: records } = countingCalls(current().store, "getSession");
    const chat = new RecordingModel(new SimChatModel());
    for (const message of ["one", "two", "three", "four"]) {
      await completedTurn({ store, session_id: "s", message, models: { chat, event: chat } });
    }
    expect(records()).toBe(0);
    expect(current().store.listTurns("s")).toHaveLength(4);
  });

  it("follows a session made anew under the same id, or imported over with another config and the same timestamps", async () => {
    const chat = new RecordingModel(new SimChatModel());
    const turn = (message: string) =>
      completedTurn({
        store: current().store,
        session_id: "s",
        message,
        models: { chat, event: chat },
      });
    await turn("hello");
    expect(systemPrompt(chat)).not.toContain(PIRATE);

    current().store.deleteSession("s");
    current().store.createSession({
      title: "s again",
      session_id: "s",
      config: { tool_invocation_mode: mode, chat_agent: { system_prompt: PIRATE } },
    });
    await turn("hello again");
    expect(systemPrompt(chat)).toContain(PIRATE);

    // The same document back with another prompt: created_at and updated_at are the document's.
    const document = current().store.exportSession("s");
    current().store.deleteSession("s");
    const config = { ...document.session.config, chat_agent: { system_prompt: "Be terse." } };
    current().store.importSession({ ...document, session: { ...document.session, config } });
    await turn("and now?");
    expect(systemPrompt(chat)).toContain("Be terse.");
    expect(systemPrompt(chat)).not.toContain(PIRATE);
  });

  it("a stored config that is not JSON is refused by name, as the record's read refuses it", async () => {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(current().path);
    db.prepare("UPDATE sessions SET config_json = '{not json' WHERE id = 's'").run();
    db.close();
    const turn = completedTurn({ store: current().store, session_id: "s", message: "hi" });
    await expect(turn).rejects.toThrow(/session s config/);
    expect(current().store.listTurns("s")).toEqual([]);
  });
});
