import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

// PostgreSQL's one refusal SQLite does not share: text cannot hold U+0000.
describe("PostgresSessionStore: text PostgreSQL cannot hold", () => {
  let database: TestDatabase;
  let store: PostgresSessionStore;
  beforeEach(async () => {
    database = await createTestDatabase();
    store = await PostgresSessionStore.open(database.url);
  });
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it("stores a NUL in a model's text as U+FFFD instead of failing the turn; JSON keeps it", async () => {
    const id = await store.createSession({ title: "nul\u0000title", config: {} });
    const claimed = await store.claimTurn(id, { user_message: "ask\u0000", runner: "1@h" });
    await store.appendRecords(id, {
      message_groups: [
        {
          turn_index: claimed.turn_index,
          messages: [{ role: "assistant", content: "a\u0000b", reasoning: "r\u0000" }],
        },
      ],
      audit: [{ event: "note", details: { text: "d\u0000" }, turn_index: 1, round_index: 1 }],
      complete_turn: { turn_index: 1, wall_time_ms: 1 },
    });
    expect((await store.getSession(id))?.title).toBe("nul\uFFFDtitle");
    expect((await store.listTurns(id))[0]?.user_message).toBe("ask\uFFFD");
    expect(
      (await store.listMessages(id)).map(({ content, reasoning }) => [content, reasoning]),
    ).toStrictEqual([
      ["ask\uFFFD", null],
      ["a\uFFFDb", "r\uFFFD"],
    ]);
    // Audit details are JSON text, where a NUL is an escape: kept as it was.
    expect((await store.listAuditLogs(id))[0]?.details).toStrictEqual({ text: "d\u0000" });
  });
});
