import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextMillisecond } from "../../test/next-millisecond.js";
import type { SessionRecord } from "../domain/records.js";
import type { ErrorBody } from "./http-errors.js";
import { startTestServer, type TestServer, turnEventsOf } from "./test-fixtures.js";

describe("HTTP API: sessions", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  async function createSession(body: unknown): Promise<SessionRecord> {
    const response = await lab.api("/api/sessions", { method: "POST", json: body });
    expect(response.status).toBe(201);
    return ((await response.json()) as { session: SessionRecord }).session;
  }

  async function expectError(response: Response, status: number, code: string, message?: RegExp) {
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as ErrorBody;
    expect(Object.keys(body)).toStrictEqual(["error"]);
    expect(body.error.code).toBe(code);
    if (message) expect(body.error.message).toMatch(message);
  }

  it("GET /api/health answers with the package version", async () => {
    const response = await lab.api("/api/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toStrictEqual({ ok: true, version: expect.any(String) });
  });

  it("POST /api/sessions creates a session with the full config; GET lists and reads it", async () => {
    const session = await createSession({
      title: "  Compare modes  ",
      config: { tool_invocation_mode: "chat_agent_tools", chat_agent: { model: "sim:fast" } },
    });
    expect(session).toMatchObject({
      title: "Compare modes",
      tool_invocation_mode: "chat_agent_tools",
      config: {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "sim:fast", options: {} },
        tools: ["mock_search", "mock_ticket"],
        max_rounds: 6,
      },
    });
    // Created in a later millisecond, so listed first (newest first): in the same one, the order
    // between the two would be their random ids'.
    nextMillisecond();
    const defaults = await createSession({ title: "Defaults" });
    expect(defaults.tool_invocation_mode).toBe("dual_agent");

    const list = (await (await lab.api("/api/sessions")).json()) as {
      sessions: unknown[];
      next_cursor: unknown;
    };
    expect(list.next_cursor).toBeNull();
    expect(list.sessions).toStrictEqual([
      {
        id: defaults.id,
        title: "Defaults",
        created_at: defaults.created_at,
        updated_at: defaults.updated_at,
        turn_count: 0,
        total_tokens: 0,
        tool_invocation_mode: "dual_agent",
        chat_model: "sim",
        event_model: "sim",
        tags: [],
        experiment_id: null,
        last_status: null,
      },
      expect.objectContaining({ id: session.id, chat_model: "sim:fast", event_model: "sim:fast" }),
    ]);

    const read = await lab.api(`/api/sessions/${session.id}`);
    expect(await read.json()).toStrictEqual({ session, turns: [] });
  });

  it("refuses a bad session body with 400, naming the fields", async () => {
    const post = (json: unknown) => lab.api("/api/sessions", { method: "POST", json });
    await expectError(await post({}), 400, "invalid_input", /^request body: title: /);
    await expectError(
      await post({ title: "x", config: { tool_invocation_mode: "both", max_rounds: 0 } }),
      400,
      "invalid_input",
      /config\.tool_invocation_mode: .*config\.max_rounds: /,
    );
    await expectError(await post({ title: "x", extra: 1 }), 400, "invalid_input", /extra/);
    await expectError(
      await post({ title: "x", config: { tools: ["mock_search", "nope"] } }),
      400,
      "invalid_input",
      /request body: config\.tools: unknown tool nope/,
    );
    await expectError(
      await post({ title: "x", config: { chat_agent: { model: "gpt-4" } } }),
      400,
      "invalid_input",
      /request body: config\.chat_agent: .*not a model string/,
    );
    await expectError(
      await post({ title: "x", config: { chat_agent: { options: { tokens_per_second: -1 } } } }),
      400,
      "invalid_input",
      /config\.chat_agent: .*tokens_per_second/,
    );
    const malformed = await lab.api("/api/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    await expectError(malformed, 400, "invalid_input", /body: not valid JSON/);
    expect((await (await lab.api("/api/sessions")).json()) as unknown).toStrictEqual({
      sessions: [],
      next_cursor: null,
    });
  });

  it("answers 404 on every route of an unknown session, and for unknown API routes", async () => {
    for (const path of ["", "/messages", "/audit", "/usage", "/usage/calls", "/turns", "/export"]) {
      await expectError(
        await lab.api(`/api/sessions/nobody${path}`),
        404,
        "session_not_found",
        /session not found: nobody/,
      );
    }
    await expectError(
      await lab.api("/api/sessions/nobody", { method: "DELETE" }),
      404,
      "session_not_found",
    );
    await expectError(
      await lab.api("/api/sessions/nobody/turns", { method: "POST", json: { message: "hi" } }),
      404,
      "session_not_found",
    );
    await expectError(
      await lab.api("/api/nothing-here"),
      404,
      "not_found",
      /GET \/api\/nothing-here/,
    );
    await expectError(
      await lab.api("/api/sessions", { method: "PUT", json: {} }),
      404,
      "not_found",
    );
  });

  it("serves a session's turns, messages, audit and usage after a turn, then deletes it (204)", async () => {
    const session = await createSession({
      title: "one turn",
      config: { tool_invocation_mode: "chat_agent_tools" },
    });
    const turn = await lab.api(`/api/sessions/${session.id}/turns`, {
      method: "POST",
      json: { message: "search for agent lab" },
    });
    const events = turnEventsOf(await turn.text());
    expect(events.at(-1)).toMatchObject({ type: "turn_end", status: "completed" });

    const get = async (path: string) =>
      (await (await lab.api(`/api/sessions/${session.id}${path}`)).json()) as Record<string, never>;
    const turns = lab.store.listTurns(session.id);
    expect(await get("/turns")).toStrictEqual({ turns, next_cursor: null });
    expect(await get("")).toStrictEqual({ session: lab.store.getSession(session.id), turns });
    expect(await get("/messages")).toStrictEqual({
      messages: lab.store.listMessages(session.id),
      next_cursor: null,
    });
    expect(await get("/audit")).toStrictEqual({
      audit: lab.store.listAuditLogs(session.id),
      next_cursor: null,
    });
    // Roll-ups only; the calls are a paged list of their own.
    const { calls, ...rollups } = lab.store.usageSummary(session.id);
    const usage = await get("/usage");
    expect(usage).toStrictEqual(rollups);
    expect(Object.keys(usage)).toStrictEqual(["turns", "session"]);
    expect(await get("/usage/calls")).toStrictEqual({ calls, next_cursor: null });
    expect((await get("/messages")).messages).toHaveLength(4);

    const deleted = await lab.api(`/api/sessions/${session.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    await expectError(await lab.api(`/api/sessions/${session.id}`), 404, "session_not_found");
    expect(lab.store.listMessages(session.id)).toStrictEqual([]);
    expect(((await (await lab.api("/api/sessions")).json()) as { sessions: [] }).sessions).toEqual(
      [],
    );
  });
});
