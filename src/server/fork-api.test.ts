import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionRecord } from "../domain/records.js";
import {
  SLOW_SIM_CONFIG,
  startTestServer,
  type TestServer,
  turnEventsOf,
} from "./test-fixtures.js";

/** Issue 15, point 1: POST /api/sessions/:id/fork, through HTTP on a real server. */
describe("HTTP API: fork a session at a turn", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  const createSession = async (config: Record<string, unknown>) => {
    const response = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "source", config },
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { session: SessionRecord }).session.id;
  };
  const turn = async (id: string, message: string) => {
    const response = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message },
    });
    expect(response.status).toBe(200);
    return turnEventsOf(await response.text());
  };
  const fork = (id: string, json: unknown) =>
    lab.api(`/api/sessions/${id}/fork`, { method: "POST", json });
  const errorOf = async (response: Response) =>
    ((await response.json()) as { error: { code: string; message: string } }).error;

  it("copies turns 1..turn_index with their messages, usage and audit, under a merged config", async () => {
    const source = await createSession({ tool_invocation_mode: "dual_agent", tags: ["mine"] });
    await turn(source, "search for agent lab");
    await turn(source, "now search for vitest");

    const response = await fork(source, {
      turn_index: 1,
      config: {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { system_prompt: "Be brief." },
      },
    });
    expect(response.status).toBe(201);
    const { session } = (await response.json()) as { session: SessionRecord };
    expect(session.id).not.toBe(source);
    expect(session.title).toBe("source (fork at turn 1)");
    expect(session.tool_invocation_mode).toBe("chat_agent_tools");
    expect(session.config).toMatchObject({
      derived_from: { kind: "fork", session_id: source, turn_index: 1 },
      tags: ["mine", "fork"],
      chat_agent: { model: "sim", system_prompt: "Be brief." },
    });

    const strip = <T extends { id: number; session_id?: string }>(rows: T[]) =>
      rows.map(({ id: _id, session_id: _session, ...rest }) => rest);
    const sourceMessages = lab.store.listMessages(source);
    expect(strip(lab.store.listMessages(session.id))).toStrictEqual(
      strip(sourceMessages.filter((message) => message.turn_index === 1)),
    );
    expect(lab.store.listTurns(session.id).map((row) => row.user_message)).toStrictEqual([
      "search for agent lab",
    ]);
    const sourceUsage = lab.store.usageSummary(source);
    const forkUsage = lab.store.usageSummary(session.id);
    expect(forkUsage.turns).toStrictEqual(sourceUsage.turns.filter((row) => row.turn_index === 1));
    expect(forkUsage.calls.map((call) => call.metric_key)).toStrictEqual(
      sourceUsage.calls.filter((call) => call.turn_index === 1).map((call) => call.metric_key),
    );
    const events = (id: string) =>
      lab.store
        .listAuditLogs(id)
        .filter((entry) => entry.turn_index === 1)
        .map((entry) => entry.event);
    expect(events(session.id)).toStrictEqual(events(source));
    // The source is untouched.
    expect(lab.store.listTurns(source)).toHaveLength(2);

    // The copied history is one the model accepts: the fork runs its own next turn, in its mode.
    const next = await turn(session.id, "and file a ticket");
    expect(next[0]).toMatchObject({ type: "turn_start", turn_index: 2, mode: "chat_agent_tools" });
    expect(next.at(-1)).toMatchObject({ type: "turn_end", status: "completed" });
    const list = (await (await lab.api("/api/sessions?tag=fork")).json()) as {
      sessions: { id: string }[];
    };
    expect(list.sessions.map((row) => row.id)).toStrictEqual([session.id]);
  });

  it("keeps the captured payloads of the copied calls", async () => {
    // Capture is on by default for the simulated model (`payloads: auto`).
    const source = await createSession({});
    await turn(source, "search for agent lab");
    const { session } = (await (await fork(source, { turn_index: 1 })).json()) as {
      session: SessionRecord;
    };
    const key = lab.store.usageSummary(source).calls.find((call) => call.metric_key)?.metric_key;
    expect(key).toBeTruthy();
    const copied = await lab.api(`/api/sessions/${session.id}/calls/${key}`);
    expect(copied.status).toBe(200);
    const original = await lab.api(`/api/sessions/${source}/calls/${key}`);
    const body = (response: unknown) => {
      const { session_id: _id, created_at: _at, ...rest } = response as Record<string, unknown>;
      return rest;
    };
    expect(body(await copied.json())).toStrictEqual(body(await original.json()));
  });

  it("turn_index 0 is a new session with the source's config and no turns; experiment tags stay behind", async () => {
    const source = lab.store.createSession({
      title: "run",
      config: { experiment: { id: "exp-1" }, tools: ["mock_search"] },
    });
    const response = await fork(source, { turn_index: 0, title: "blank" });
    expect(response.status).toBe(201);
    const { session } = (await response.json()) as { session: SessionRecord };
    expect(session.title).toBe("blank");
    expect(session.config.experiment).toBeUndefined();
    expect(session.config.tools).toStrictEqual(["mock_search"]);
    expect(lab.store.listTurns(session.id)).toStrictEqual([]);
    expect(lab.store.findSessionsByExperiment("exp-1").map((row) => row.id)).toStrictEqual([
      source,
    ]);
  });

  it("a changed chat model takes the event agent with it when it followed the chat agent", async () => {
    const source = await createSession({});
    const response = await fork(source, {
      turn_index: 0,
      config: { chat_agent: { model: "sim:other" } },
    });
    const { session } = (await response.json()) as { session: SessionRecord };
    expect(session.config).toMatchObject({
      chat_agent: { model: "sim:other" },
      event_agent: { model: "sim:other" },
    });
  });

  it("refuses what cannot be forked, naming the problem, and stores nothing", async () => {
    const source = await createSession({});
    await turn(source, "search for agent lab");
    const before = lab.store.listSessions().length;

    const unknown = await fork("no-such-session", { turn_index: 0 });
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe("session_not_found");

    const past = await fork(source, { turn_index: 2 });
    expect(past.status).toBe(400);
    expect((await errorOf(past)).message).toBe(
      `turn_index: session ${source} has turns 1 to 1, so turn_index 2 is past its last turn`,
    );
    const negative = await fork(source, { turn_index: -1 });
    expect(negative.status).toBe(400);
    expect((await errorOf(negative)).message).toContain("turn_index");
    const missing = await fork(source, {});
    expect((await errorOf(missing)).message).toContain("turn_index");

    const badField = await fork(source, { turn_index: 1, config: { max_rounds: 0 } });
    expect(badField.status).toBe(400);
    expect((await errorOf(badField)).message).toMatch(/^request body: config\.max_rounds: /);
    const badModel = await fork(source, {
      turn_index: 1,
      config: { chat_agent: { model: "nope" } },
    });
    expect(badModel.status).toBe(400);
    expect((await errorOf(badModel)).message).toMatch(/^request body: config\.chat_agent: /);
    const badTool = await fork(source, { turn_index: 1, config: { tools: ["no_such_tool"] } });
    expect(badTool.status).toBe(400);
    expect((await errorOf(badTool)).message).toContain("no_such_tool");
    const secret = await fork(source, {
      turn_index: 1,
      config: { chat_agent: { options: { headers: { Authorization: "Bearer sk-abc" } } } },
    });
    expect(secret.status).toBe(400);
    expect(JSON.stringify(await errorOf(secret))).not.toContain("sk-abc");

    expect(lab.store.listSessions()).toHaveLength(before);
  });

  it("refuses (409) a fork at or after a running turn; earlier finished turns can be forked", async () => {
    const source = await createSession(SLOW_SIM_CONFIG);
    await turn(source, "hi");
    const controller = new AbortController();
    const running = await lab.api(`/api/sessions/${source}/turns`, {
      method: "POST",
      json: { message: "tell me about agent lab" },
      signal: controller.signal,
    });
    expect(running.status).toBe(200);
    try {
      const refused = await fork(source, { turn_index: 2 });
      expect(refused.status).toBe(409);
      expect((await errorOf(refused)).code).toBe("turn_in_progress");
      const earlier = await fork(source, { turn_index: 1 });
      expect(earlier.status).toBe(201);
    } finally {
      controller.abort();
    }
  });
});
