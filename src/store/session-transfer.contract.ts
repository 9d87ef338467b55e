import { expect, it } from "vitest";
import { EXPORT_VERSION_1 } from "../../test/legacy-layouts.js";
import { InvalidInputError, SessionExistsError, SessionNotFoundError } from "../domain/errors.js";
import type { SessionExport } from "../domain/session-export.js";
import type { SessionStore } from "./session-store.js";

/**
 * deleteSession, listSessionOverviews, exportSession and importSession, for any SessionStore.
 * Called inside `describeSessionStoreContract`, so every backend runs it.
 */
export function sessionTransferContract(getStore: () => SessionStore): void {
  /** A session that exercises every table: two turns (one cancelled), a tool round, audit, calls. */
  async function buildSession(store: SessionStore, sessionId: string): Promise<void> {
    await store.createSession({
      title: `Session ${sessionId}`,
      session_id: sessionId,
      config: {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "openai:gpt-4.1-mini", api_key_env: "OPENAI_API_KEY" },
        event_agent: { model: "sim" },
        extra: { kept: [1, 2] },
      },
    });
    await store.startTurn(sessionId, { turn_index: 1, user_message: "search", runner: "1@h" });
    await store.appendMessage(sessionId, {
      turn_index: 1,
      message: { role: "user", content: "search" },
    });
    const call = { id: "call_1", name: "mock_search", arguments: { q: "x" }, raw_arguments: "{}" };
    await store.appendMessages(sessionId, {
      turn_index: 1,
      messages: [
        { role: "assistant", content: "", tool_calls: [call] },
        { role: "tool", content: '{"ok":true}', tool_call_id: "call_1", name: "mock_search" },
      ],
    });
    await store.appendAudit(sessionId, {
      event: "turn_start",
      details: { mode: "chat_agent_tools" },
      turn_index: 1,
      round_index: 1,
    });
    await store.appendUsage(sessionId, {
      turn_index: 1,
      round_index: 1,
      usage: { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35, cached_tokens: 10 },
      ttft_ms: 120,
      elapsed_ms: 300,
      metadata: { metric_key: "chat:1:1" },
    });
    await store.appendUsage(sessionId, {
      turn_index: 1,
      round_index: 1,
      usage: {},
      elapsed_ms: 12.5,
      metadata: {
        agent: "event_kernel",
        call_kind: "tool_execution",
        event_id: "call_1",
        event_name: "mock_search",
        tool_latency_ms: 11,
        metric_key: "tool:1:1:call_1",
      },
    });
    await store.completeTurn(sessionId, { turn_index: 1, wall_time_ms: 400 });
    await store.startTurn(sessionId, { turn_index: 2, user_message: "again" });
    await store.appendMessage(sessionId, {
      turn_index: 2,
      message: { role: "user", content: "again" },
    });
    await store.appendAudit(sessionId, { event: "note", details: { free: "form" } });
    await store.completeTurn(sessionId, { turn_index: 2, wall_time_ms: 9, status: "cancelled" });
  }

  /** What a round trip may change: the row ids, the session id inside records, the export time. */
  function comparable(document: SessionExport): unknown {
    return {
      ...document,
      exported_at: "*",
      session: { ...document.session, id: "*" },
      messages: document.messages.map((message) => ({ ...message, id: 0, session_id: "*" })),
      audit: document.audit.map((entry) => ({ ...entry, id: 0, session_id: "*" })),
      usage: { ...document.usage, calls: document.usage.calls.map((call) => ({ ...call, id: 0 })) },
    };
  }

  it("deleteSession removes the session and every row of it, and nothing else", async () => {
    const store = getStore();
    await buildSession(store, "gone");
    await buildSession(store, "kept");
    await store.deleteSession("gone");

    expect(await store.getSession("gone")).toBeNull();
    expect(await store.listTurns("gone")).toStrictEqual([]);
    expect(await store.listMessages("gone")).toStrictEqual([]);
    expect(await store.listAuditLogs("gone")).toStrictEqual([]);
    expect((await store.usageSummary("gone")).calls).toStrictEqual([]);
    const listed = await store.listSessions();
    expect(listed.map((session) => [session.id, session.turn_count, session.total_tokens])).toEqual(
      [["kept", 2, 35]],
    );
    expect((await store.listMessages("kept")).length).toBe(4);

    await expect(async () => store.deleteSession("gone")).rejects.toThrow(SessionNotFoundError);
    await expect(async () => store.deleteSession("nobody")).rejects.toThrow(
      /session not found: nobody/,
    );
    // The id is free again, for a fresh session with no trace of the old one.
    await store.createSession({ title: "again", config: {}, session_id: "gone" });
    expect((await store.listSessions()).find((session) => session.id === "gone")).toMatchObject({
      turn_count: 0,
      total_tokens: 0,
    });
  });

  it("listSessionOverviews adds the mode and model strings to exactly the listSessions rows", async () => {
    const store = getStore();
    await buildSession(store, "full");
    await store.createSession({ title: "defaults", config: {}, session_id: "defaults" });
    await store.createSession({
      title: "follows",
      session_id: "follows",
      config: { chat_agent: { model: "openai:llama3.1" } },
    });
    await store.createSession({
      title: "odd",
      session_id: "odd",
      config: { chat_agent: { model: 42 }, event_agent: null },
    });

    const listed = await store.listSessions();
    const overviews = await store.listSessionOverviews();
    expect(Object.keys(listed[0] ?? {}).sort()).toStrictEqual(
      ["created_at", "id", "title", "total_tokens", "turn_count", "updated_at"].sort(),
    );
    expect(
      overviews.map(({ tool_invocation_mode, chat_model, event_model, ...rest }) => rest),
    ).toStrictEqual(listed);
    const byId = Object.fromEntries(
      overviews.map(({ id, tool_invocation_mode, chat_model, event_model }) => [
        id,
        { tool_invocation_mode, chat_model, event_model },
      ]),
    );
    expect(byId).toStrictEqual({
      full: {
        tool_invocation_mode: "chat_agent_tools",
        chat_model: "openai:gpt-4.1-mini",
        event_model: "sim",
      },
      defaults: { tool_invocation_mode: "dual_agent", chat_model: "sim", event_model: "sim" },
      // No event agent: it follows the chat agent, as the runtime's config does.
      follows: {
        tool_invocation_mode: "dual_agent",
        chat_model: "openai:llama3.1",
        event_model: "openai:llama3.1",
      },
      odd: { tool_invocation_mode: "dual_agent", chat_model: "sim", event_model: "sim" },
    });
  });

  it("exportSession writes one document with every record of the session", async () => {
    const store = getStore();
    await buildSession(store, "source");
    const document = await store.exportSession("source");
    expect(Object.keys(document)).toStrictEqual([
      "format",
      "version",
      "exported_at",
      "session",
      "turns",
      "messages",
      "audit",
      "usage",
    ]);
    expect(document.format).toBe("agent-lab.session");
    expect(document.version).toBe(2);
    expect(Number.isNaN(Date.parse(document.exported_at))).toBe(false);
    expect(document.session).toStrictEqual(await store.getSession("source"));
    expect(document.turns).toStrictEqual(await store.listTurns("source"));
    expect(document.messages).toStrictEqual(await store.listMessages("source"));
    expect(document.audit).toStrictEqual(await store.listAuditLogs("source"));
    expect(document.usage).toStrictEqual(await store.usageSummary("source"));
    // Plain JSON: it survives serialization unchanged.
    expect(JSON.parse(JSON.stringify(document))).toStrictEqual(document);
    await expect(async () => store.exportSession("nobody")).rejects.toThrow(SessionNotFoundError);
  });

  it("importSession restores an exported session; export → import → export is the same document", async () => {
    const store = getStore();
    await buildSession(store, "source");
    const first = await store.exportSession("source");
    const wire = JSON.parse(JSON.stringify(first)) as unknown;

    // The document's own id by default: taken while the original exists.
    await expect(async () => store.importSession(wire)).rejects.toThrow(SessionExistsError);
    expect(await store.importSession(wire, { session_id: "copy" })).toBe("copy");
    const second = await store.exportSession("copy");
    expect(comparable(second)).toStrictEqual(comparable(first));
    expect(second.turns.map((turn) => turn.status)).toStrictEqual(["completed", "cancelled"]);
    expect(second.usage.calls.map((call) => call.metric_key)).toStrictEqual([
      "chat:1:1",
      "tool:1:1:call_1",
    ]);
    expect(second.messages.every((message) => message.session_id === "copy")).toBe(true);

    // The listing counts the imported session's turns and tokens.
    const listed = await store.listSessions();
    expect(listed.find((session) => session.id === "copy")).toMatchObject({
      turn_count: 2,
      total_tokens: 35,
    });
    // Recording a call again under an imported metric key is still a no-op.
    expect(
      await store.appendUsage("copy", {
        turn_index: 1,
        round_index: 1,
        usage: { total_tokens: 99 },
        elapsed_ms: 1,
        metadata: { metric_key: "chat:1:1" },
      }),
    ).toBe(false);

    await store.deleteSession("source");
    expect(await store.importSession(wire)).toBe("source");
    expect(comparable(await store.exportSession("source"))).toStrictEqual(comparable(first));
  });

  it("importSession brings a turn exported while it ran as interrupted: the copy can go on at once", async () => {
    const store = getStore();
    await store.createSession({ title: "live", config: {}, session_id: "live" });
    // Claimed by a runner that is alive (this very process): its turn stays running.
    const claimed = await store.claimTurn("live", {
      user_message: "still going",
      runner: `${process.pid}@elsewhere`,
    });
    const document = await store.exportSession("live");
    expect(document.turns.map((turn) => turn.status)).toStrictEqual(["running"]);
    expect(await store.importSession(document, { session_id: "copy-of-live" })).toBe(
      "copy-of-live",
    );
    const [turn] = await store.listTurns("copy-of-live");
    expect(turn).toMatchObject({
      turn_index: claimed.turn_index,
      status: "interrupted",
      completed_at: document.exported_at,
      runner: `${process.pid}@elsewhere`,
    });
    // Nothing holds the copy: its next turn is claimed.
    const next = await store.claimTurn("copy-of-live", { user_message: "go on", runner: "me" });
    expect(next.turn_index).toBe(claimed.turn_index + 1);
    // The original's turn is still its runner's.
    expect((await store.listTurns("live"))[0]?.status).toBe("running");
  });

  it("importSession refuses a bad document, naming the field, and stores nothing", async () => {
    const store = getStore();
    await buildSession(store, "source");
    const good = JSON.parse(JSON.stringify(await store.exportSession("source"))) as Record<
      string,
      unknown
    > & { messages: Record<string, unknown>[]; usage: { calls: Record<string, unknown>[] } };
    const before = await store.listSessions();
    const variant = (change: (document: typeof good) => void): unknown => {
      const copy = structuredClone(good);
      change(copy);
      return copy;
    };
    const cases: [string, unknown, RegExp][] = [
      ["not an object", "text", /importSession: /],
      ["wrong format", variant((d) => Object.assign(d, { format: "other" })), /format/],
      ["newer version", variant((d) => Object.assign(d, { version: 3 })), /version/],
      [
        "bad role",
        variant((d) => Object.assign(d.messages[0] ?? {}, { role: "robot" })),
        /messages\.0\.role/,
      ],
      [
        "message of a missing turn",
        variant((d) => Object.assign(d.messages[0] ?? {}, { turn_index: 7 })),
        /messages\.0\.turn_index: turn 7 is not one of the document's turns/,
      ],
      [
        "negative tokens",
        variant((d) => Object.assign(d.usage.calls[0] ?? {}, { prompt_tokens: -1 })),
        /usage\.calls\.0\.prompt_tokens/,
      ],
      [
        "duplicate metric key",
        variant((d) => Object.assign(d.usage.calls[1] ?? {}, { metric_key: "chat:1:1" })),
        /usage\.calls\.1\.metric_key/,
      ],
      [
        "a secret in the config",
        variant((d) =>
          Object.assign(d, {
            session: { ...(d.session as object), config: { chat_agent: { api_key: "sk-1" } } },
          }),
        ),
        /session\.config\.chat_agent\.api_key: secrets are never stored/,
      ],
      [
        "a mode the config contradicts",
        variant((d) =>
          Object.assign(d, {
            session: { ...(d.session as object), tool_invocation_mode: "dual_agent" },
          }),
        ),
        /session\.tool_invocation_mode: is dual_agent but the config's mode is chat_agent_tools/,
      ],
      ["an empty session id", good, /importSession: session_id/],
    ];
    for (const [label, document, message] of cases) {
      const options = label === "an empty session id" ? { session_id: "" } : { session_id: "new" };
      await expect(async () => store.importSession(document, options), label).rejects.toThrow(
        message,
      );
      await expect(async () => store.importSession(document, options), label).rejects.toThrow(
        InvalidInputError,
      );
    }
    expect(await store.listSessions()).toStrictEqual(before);
    expect(await store.getSession("new")).toBeNull();
    // Audit details arriving from a file are redacted like any other.
    const withSecret = variant((d) => {
      d.audit = [
        {
          id: 1,
          session_id: "x",
          turn_index: null,
          round_index: null,
          event: "e",
          details: { password: "p" },
          created_at: "t",
        },
      ];
    });
    await store.importSession(withSecret, { session_id: "redacted" });
    expect((await store.listAuditLogs("redacted"))[0]?.details).toStrictEqual({
      password: "[redacted]",
    });
  });

  it("imports a version-1 document, provider fields empty, its estimate labelled and priced by the table", async () => {
    const store = getStore();
    expect(await store.importSession(structuredClone(EXPORT_VERSION_1))).toBe("old-export");
    const messages = await store.listMessages("old-export");
    expect(
      messages.map(({ content, reasoning, refusal }) => ({ content, reasoning, refusal })),
    ).toStrictEqual([
      { content: "hello", reasoning: null, refusal: null },
      { content: "hi", reasoning: null, refusal: null },
    ]);
    const usage = await store.usageSummary("old-export");
    expect(usage.calls[0]).toMatchObject({
      total_tokens: 25,
      estimated: true,
      usage_source: "estimated",
      reasoning_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
      // The session's chat agent is the simulated model, which the table prices at 0.
      cost_estimated_usd: 0,
      response_model: null,
      response_id: null,
      system_fingerprint: null,
      finish_reason: null,
      refusal: false,
      raw_usage: null,
    });
    expect(usage.session).toMatchObject({
      total_tokens: 25,
      estimated_count: 1,
      cost_usd: 0,
      reported_cost_count: 0,
      unpriced_count: 0,
    });
    // Exported again, it is a version-2 document.
    expect((await store.exportSession("old-export")).version).toBe(2);
  });

  it("prices a version-1 document's model calls at its agents' models, as the runtime would", async () => {
    const store = getStore();
    const withModel = (model: string, prices?: Record<string, unknown>) => {
      const document = structuredClone(EXPORT_VERSION_1) as unknown as {
        session: { config: Record<string, unknown> };
        usage: { calls: Record<string, unknown>[] };
      };
      document.session.config = {
        tool_invocation_mode: "dual_agent",
        chat_agent: { model },
        ...(prices === undefined ? {} : { prices }),
      };
      const [call] = document.usage.calls;
      // The event kernel's call goes to the event agent, which follows the chat agent here.
      document.usage.calls.push(
        { ...call, id: 2, agent: "event_kernel", metric_key: "kernel:1:1" },
        { ...call, id: 3, call_kind: "tool_execution", metric_key: "tool:1:1", estimated: false },
      );
      return document;
    };
    const costs = async (id: string) =>
      (await store.usageSummary(id)).calls.map((call) => [
        call.metric_key,
        call.cost_estimated_usd,
      ]);
    await store.importSession(withModel("openai:gpt-4.1-mini-2025-04-14"), { session_id: "mini" });
    // gpt-4.1-mini: 20 prompt tokens at $0.4/M, 5 completion tokens at $1.6/M.
    const mini = (20 * 0.4 + 5 * 1.6) / 1_000_000;
    expect(await costs("mini")).toStrictEqual([
      ["chat:1:1", mini],
      ["kernel:1:1", mini],
      ["tool:1:1", null],
    ]);
    await store.importSession(
      withModel("openai:house", { "openai:house": { input: 1, output: 1 } }),
      { session_id: "custom" },
    );
    expect((await costs("custom"))[0]).toStrictEqual(["chat:1:1", 25 / 1_000_000]);
    await store.importSession(withModel("openai:house"), { session_id: "unknown" });
    expect(await costs("unknown")).toStrictEqual([
      ["chat:1:1", null],
      ["kernel:1:1", null],
      ["tool:1:1", null],
    ]);
    expect((await store.usageSummary("unknown")).session).toMatchObject({
      cost_usd: null,
      unpriced_count: 2,
    });
  });
}
