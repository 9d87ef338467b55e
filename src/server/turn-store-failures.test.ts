import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, turnEventsOf } from "./test-fixtures.js";

/**
 * The database refusing writes while a server runs turns: the client gets a clear error (an SSE
 * `error` then `turn_end` mid-turn, a JSON 503 when the turn cannot even start), never a bare 500,
 * and the session is free for the next turn.
 */
describe("HTTP API: turns when the database refuses", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  /** A second connection makes the file refuse messages of a role (as a full disk would). */
  const refuse = (role: string) => {
    const connection = new Database(lab.store.path);
    connection.exec(`
      CREATE TRIGGER refuse_${role} BEFORE INSERT ON messages WHEN NEW.role = '${role}'
      BEGIN SELECT RAISE(ABORT, 'no space left for ${role} messages'); END`);
    connection.close();
  };
  const allow = (role: string) => {
    const connection = new Database(lab.store.path);
    connection.exec(`DROP TRIGGER refuse_${role}`);
    connection.close();
  };
  const postTurn = (id: string, message: string) =>
    lab.api(`/api/sessions/${id}/turns`, { method: "POST", json: { message } });

  it.each(["chat_agent_tools", "dual_agent"] as const)(
    "mid-turn: the stream ends with an error naming the refusal and a failed turn_end; the next turn runs (%s)",
    async (mode) => {
      const id = lab.store.createSession({ title: "t", config: { tool_invocation_mode: mode } });
      refuse("assistant");
      const response = await postTurn(id, "search for agent lab");
      expect(response.status).toBe(200);
      const events = turnEventsOf(await response.text());
      expect(events.find((event) => event.type === "error")).toMatchObject({
        code: "storage_failed",
        message: expect.stringContaining("no space left for assistant messages"),
      });
      expect(events.at(-1)).toMatchObject({ type: "turn_end", turn_index: 1, status: "failed" });
      expect(lab.store.listTurns(id).map((turn) => turn.status)).toEqual(["failed"]);

      allow("assistant");
      const next = await postTurn(id, "hello");
      expect(next.status).toBe(200);
      expect(turnEventsOf(await next.text()).at(-1)).toMatchObject({
        type: "turn_end",
        turn_index: 2,
        status: "completed",
      });
    },
  );

  it("through the gateway: a 503 storage_failed naming the refusal (an error event once streaming), not a 500 logged as the lab's bug", async () => {
    refuse("assistant");
    const ask = (stream: boolean) =>
      fetch(new URL("/v1/chat/completions", lab.url), {
        method: "POST",
        headers: {
          authorization: `Bearer ${lab.server.token}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          model: "sim",
          messages: [{ role: "user", content: "hello" }],
          stream,
        }),
      });
    const whole = await ask(false);
    expect(whole.status).toBe(503);
    const { error } = (await whole.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("storage_failed");
    expect(error.message).toContain("no space left for assistant messages");
    const streamed = await (await ask(true)).text();
    expect(streamed).toMatch(
      /data: \{"error":\{"message":"[^"]*no space left for assistant messages/,
    );
    expect(streamed).toContain('"code":"storage_failed"');
    expect(lab.logs.join("\n")).not.toContain("unexpected failure");
    const turns = lab.store.listSessions().flatMap((session) => lab.store.listTurns(session.id));
    expect(turns.map((turn) => turn.status)).toEqual(["failed", "failed"]);
  });

  it("before the turn starts: a JSON 503 naming the refusal, nothing stored", async () => {
    const id = lab.store.createSession({ title: "t", config: {} });
    refuse("user");
    const response = await postTurn(id, "hello");
    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      error: {
        code: "storage_failed",
        message:
          "the database refused the write: no space left for user messages (SQLITE_CONSTRAINT_TRIGGER)",
      },
    });
    expect(lab.store.listTurns(id)).toEqual([]);
  });
});
