import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnEvent } from "../domain/turn-events.js";
import {
  SLOW_SIM_CONFIG,
  startTestServer,
  type TestServer,
  turnEventsOf,
  waitFor,
} from "./test-fixtures.js";

/** Reads an SSE response until `until` matches an event, then stops reading (and returns). */
async function readUntil(
  response: Response,
  until: (event: TurnEvent) => boolean,
): Promise<TurnEvent[]> {
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error("no body");
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return turnEventsOf(text);
    text += decoder.decode(value, { stream: true });
    const complete = text.slice(0, text.lastIndexOf("\n\n") + 2);
    const events = turnEventsOf(complete);
    if (events.some(until)) return events;
  }
}

describe("HTTP API: turns over server-sent events", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  const create = (config: unknown, session_id?: string) => {
    const id = lab.store.createSession({
      title: "t",
      config: config as Record<string, unknown>,
      ...(session_id ? { session_id } : {}),
    });
    return id;
  };
  const postTurn = (id: string, json: unknown, signal?: AbortSignal) =>
    lab.api(`/api/sessions/${id}/turns`, { method: "POST", json, ...(signal ? { signal } : {}) });

  it.each(["chat_agent_tools", "dual_agent"] as const)(
    "streams one SSE event per turn event, named by its type, and stores the turn (%s)",
    async (mode) => {
      const id = create({ tool_invocation_mode: mode });
      const response = await postTurn(id, { message: "search for agent lab" });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const text = await response.text();
      const events = turnEventsOf(text); // throws when a name differs from its type
      const types = events.map((event) => event.type);
      expect(types[0]).toBe("turn_start");
      expect(types[1]).toBe("round_start");
      expect(types.at(-1)).toBe("turn_end");
      expect(types.filter((type) => type === "turn_end")).toHaveLength(1);
      expect(types).toContain("tool_call");
      expect(types).toContain("tool_result");
      expect(types).toContain("text_delta");
      expect(types.filter((type) => type === "round_start")).toHaveLength(
        types.filter((type) => type === "round_end").length,
      );
      const start = events[0] as Extract<TurnEvent, { type: "turn_start" }>;
      expect(start).toStrictEqual({
        type: "turn_start",
        session_id: id,
        turn_index: 1,
        mode,
        simulated: true,
      });
      const end = events.at(-1) as Extract<TurnEvent, { type: "turn_end" }>;
      expect(end.status).toBe("completed");
      const answer = events
        .filter((event) => event.type === "text_delta" && event.round_index === 2)
        .map((event) => (event as { text: string }).text)
        .join("");
      expect(answer).toBe(end.answer);

      const [turn] = lab.store.listTurns(id);
      expect(turn).toMatchObject({
        turn_index: 1,
        status: "completed",
        user_message: "search for agent lab",
      });
      expect(lab.store.listMessages(id).at(-1)?.content).toBe(end.answer);
      expect(lab.store.usageRollups(id).turns[0]).toStrictEqual(end.usage);
    },
  );

  it("refuses before streaming: an empty message (400), a session of another mode (409)", async () => {
    const id = create({ tool_invocation_mode: "dual_agent" });
    const empty = await postTurn(id, { message: "   " });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toStrictEqual({
      error: { code: "invalid_input", message: "request body: message: the message is empty" },
    });
    const mismatch = await postTurn(id, {
      message: "hello",
      tool_invocation_mode: "chat_agent_tools",
    });
    expect(mismatch.status).toBe(409);
    expect(((await mismatch.json()) as { error: { code: string } }).error.code).toBe(
      "session_mode_mismatch",
    );
    const same = await postTurn(id, { message: "hello", tool_invocation_mode: "dual_agent" });
    expect(same.status).toBe(200);
    await same.text();
    expect(lab.store.listTurns(id).map((turn) => turn.status)).toStrictEqual(["completed"]);
  });

  it("refuses a second concurrent turn, and deleting the session under it, with 409", async () => {
    const id = create(SLOW_SIM_CONFIG);
    const controller = new AbortController();
    const first = await postTurn(id, { message: "tell me about agent lab" }, controller.signal);
    expect(first.status).toBe(200);

    const second = await postTurn(id, { message: "me too" });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: { code: "turn_in_progress" } });
    const deleted = await lab.api(`/api/sessions/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(409);
    expect(await deleted.json()).toMatchObject({ error: { code: "turn_in_progress" } });

    controller.abort();
    await waitFor(() => lab.store.listTurns(id)[0]?.status === "cancelled");
    // Once the first turn is stored, the session takes turns again.
    const third = await postTurn(id, {
      message: "hello",
      tool_invocation_mode: "chat_agent_tools",
    });
    expect(third.status).toBe(200);
    third.body?.cancel();
  });

  it("a client that disconnects mid-turn cancels it: stored as cancelled, with its partial text", async () => {
    const id = create(SLOW_SIM_CONFIG);
    const controller = new AbortController();
    const response = await postTurn(id, { message: "tell me about agent lab" }, controller.signal);
    const seen = await readUntil(
      response,
      (event) => event.type === "text_delta" && event.text.length > 0,
    );
    expect(seen[0]?.type).toBe("turn_start");
    controller.abort();

    await waitFor(() => lab.store.listTurns(id)[0]?.status === "cancelled");
    const [turn] = lab.store.listTurns(id);
    expect(turn?.completed_at).not.toBeNull();
    expect(lab.store.listAuditLogs(id).map((entry) => entry.event)).toContain("turn_cancelled");
    const stored = lab.store.listMessages(id);
    expect(stored.at(-1)?.role).toBe("assistant");
    expect(stored.at(-1)?.content.length).toBeGreaterThan(0);
    expect(lab.logs).toStrictEqual([]);
  });

  it("closing the server cancels the running turns and stores them first", async () => {
    const id = create(SLOW_SIM_CONFIG);
    const response = await postTurn(id, { message: "tell me about agent lab" });
    await readUntil(response, (event) => event.type === "text_delta");
    await lab.server.close();
    expect(lab.store.listTurns(id)[0]?.status).toBe("cancelled");
  });
});
