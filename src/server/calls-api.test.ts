import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CallPayloadRecord } from "../domain/call-capture.js";
import type { MessageRecord } from "../domain/records.js";
import type { UsageCallRecord, UsageSummary } from "../domain/usage.js";
import type { ErrorBody } from "./http-errors.js";
import { startTestServer, type TestServer, turnEventsOf } from "./test-fixtures.js";

/**
 * Issue 11's faces over HTTP: the usage summary's new fields, messages with reasoning, and one
 * call's captured payload (`GET /api/sessions/:id/calls/:metric_key`) with its failure paths.
 */
describe("HTTP API: calls and the richer usage", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  async function createSession(config: Record<string, unknown> = {}): Promise<string> {
    const response = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "calls", config },
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { session: { id: string } }).session.id;
  }

  async function runTurn(sessionId: string, message: string) {
    const response = await lab.api(`/api/sessions/${sessionId}/turns`, {
      method: "POST",
      json: { message },
    });
    expect(response.status).toBe(200);
    return turnEventsOf(await response.text());
  }

  /** A string is the exact message; a pattern matches part of it. */
  async function expectError(
    response: Response,
    status: number,
    code: string,
    message: RegExp | string,
  ) {
    expect(response.status).toBe(status);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe(code);
    if (typeof message === "string") expect(body.error.message).toBe(message);
    else expect(body.error.message).toMatch(message);
  }

  /** A stored call with a payload, written through the store port as the runtime writes it. */
  function storeCall(sessionId: string, responseBody: string) {
    lab.store.startTurn(sessionId, { turn_index: 1, user_message: "hi" });
    lab.store.appendUsage(sessionId, {
      turn_index: 1,
      round_index: 1,
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, reasoning_tokens: 3 },
      elapsed_ms: 12,
      metadata: {
        metric_key: "chat:1:1",
        cost_usd: 0.0021,
        cost_estimated_usd: 0.0019,
        response_model: "gpt-4o-2024-08-06",
        finish_reason: "stop",
      },
    });
    lab.store.appendUsage(sessionId, {
      turn_index: 1,
      round_index: 1,
      usage: {},
      elapsed_ms: 3,
      metadata: {
        agent: "event_kernel",
        call_kind: "tool_execution",
        event_id: "e1",
        event_name: "mock_search",
        metric_key: "tool:1:1:e1",
      },
    });
    lab.store.appendCallPayload(sessionId, {
      metric_key: "chat:1:1",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: JSON.stringify({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
      }),
      response_body: responseBody,
      request_bytes: 70,
      response_bytes: 900_000,
      request_truncated: false,
      response_truncated: true,
    });
  }

  it("GET /api/sessions/:id/calls/:metric_key returns the captured call, cut flags and sizes", async () => {
    const id = await createSession();
    storeCall(id, 'data: {"choices":[{"delta":{"content":"hello"}}]}\n\n');
    const response = await lab.api(`/api/sessions/${id}/calls/${encodeURIComponent("chat:1:1")}`);
    expect(response.status).toBe(200);
    const payload = (await response.json()) as CallPayloadRecord;
    expect(payload).toMatchObject({
      session_id: id,
      metric_key: "chat:1:1",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      response_body: 'data: {"choices":[{"delta":{"content":"hello"}}]}\n\n',
      request_bytes: 70,
      response_bytes: 900_000,
      request_truncated: false,
      response_truncated: true,
    });
    expect(JSON.parse(payload.request_body)).toStrictEqual({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(payload.stored_bytes).toBeGreaterThan(0);
  });

  it("blanks key-shaped text a captured body quotes", async () => {
    const id = await createSession();
    const key = "sk-proj-abcdefghijklmnopqrstuvwx";
    storeCall(id, `data: {"error":"invalid key ${key}"}\n\n`);
    const text = await (await lab.api(`/api/sessions/${id}/calls/chat:1:1`)).text();
    expect(text).not.toContain(key);
    expect(text).toContain("[redacted]");
  });

  it("answers call_not_captured, saying why, for a tool execution and an unknown key", async () => {
    const id = await createSession();
    storeCall(id, "data: [DONE]\n\n");
    await expectError(
      await lab.api(`/api/sessions/${id}/calls/tool:1:1:e1`),
      404,
      "call_not_captured",
      `no payload kept for call tool:1:1:e1 of session ${id}: it is a tool execution; only model calls (chat completions, argument fallbacks) are captured`,
    );
    await expectError(
      await lab.api(`/api/sessions/${id}/calls/chat:9:9`),
      404,
      "call_not_captured",
      `no payload kept for call chat:9:9 of session ${id}: the session has no call with this metric key (agent-lab usage ${id} lists them in its Calls table, GET /api/sessions/${id}/usage/calls pages through them)`,
    );
  });

  it("says capture was off when the session's capture.payloads is off", async () => {
    const id = await createSession({ capture: { payloads: "off" } });
    await runTurn(id, "search for agent lab");
    const { calls } = (await (await lab.api(`/api/sessions/${id}/usage/calls`)).json()) as {
      calls: UsageCallRecord[];
    };
    expect(calls.some((call) => call.metric_key === "chat:1:1")).toBe(true);
    await expectError(
      await lab.api(`/api/sessions/${id}/calls/chat:1:1`),
      404,
      "call_not_captured",
      `no payload kept for call chat:1:1 of session ${id}: payload capture was off for this call (the session's capture.payloads is off, or auto with an endpoint that is not on this machine)`,
    );
  });

  const before =
    "this call was recorded before the lab kept payloads (an older database) or came with an imported session (exports carry no payloads)";

  it("says a call recorded before the lab kept payloads is one, even where capture is off now", async () => {
    // A row as an upgraded database holds it: no finish reason, counts from the endpoint.
    const id = await createSession({ capture: { payloads: "off" } });
    lab.store.startTurn(id, { turn_index: 1, user_message: "hi" });
    lab.store.appendUsage(id, {
      turn_index: 1,
      round_index: 1,
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      elapsed_ms: 12,
      metadata: { metric_key: "chat:1:1" },
    });
    await expectError(
      await lab.api(`/api/sessions/${id}/calls/chat:1:1`),
      404,
      "call_not_captured",
      `no payload kept for call chat:1:1 of session ${id}: ${before}`,
    );
  });

  it("says an imported session's calls came without payloads, though capture kept them at home", async () => {
    const id = await createSession();
    await runTurn(id, "search for agent lab");
    expect((await lab.api(`/api/sessions/${id}/calls/chat:1:1`)).status).toBe(200);
    const exported = await (await lab.api(`/api/sessions/${id}/export`)).json();
    const imported = await lab.api("/api/import?session_id=copy", {
      method: "POST",
      json: exported,
    });
    expect(imported.status).toBe(201);
    await expectError(
      await lab.api("/api/sessions/copy/calls/chat:1:1"),
      404,
      "call_not_captured",
      `no payload kept for call chat:1:1 of session copy: ${before}`,
    );
  });

  it("answers session_not_found for an unknown session", async () => {
    await expectError(
      await lab.api("/api/sessions/nope/calls/chat:1:1"),
      404,
      "session_not_found",
      /session not found: nope/,
    );
  });

  it("keeps the sim's calls by default: the request body sent and the raw stream", async () => {
    const id = await createSession();
    await runTurn(id, "search for agent lab");
    const response = await lab.api(`/api/sessions/${id}/calls/chat:1:1`);
    expect(response.status).toBe(200);
    const payload = (await response.json()) as CallPayloadRecord;
    const request = JSON.parse(payload.request_body) as { messages: { content: string }[] };
    expect(request.messages.at(-1)?.content).toContain("search for agent lab");
    // dual_agent's chat agent writes its tool request as an <event> tag in the raw stream.
    expect(payload.response_body).toContain("<event");
    expect(payload.request_truncated || payload.response_truncated).toBe(false);
  });

  it("GET /usage/calls carries every new per-call field, GET /usage the cost roll-ups", async () => {
    const id = await createSession();
    storeCall(id, "data: [DONE]\n\n");
    const usage = (await (await lab.api(`/api/sessions/${id}/usage`)).json()) as Omit<
      UsageSummary,
      "calls"
    >;
    expect(usage).not.toHaveProperty("calls");
    const { calls } = (await (await lab.api(`/api/sessions/${id}/usage/calls`)).json()) as {
      calls: UsageCallRecord[];
    };
    const chat = calls.find((call) => call.metric_key === "chat:1:1");
    expect(chat).toMatchObject({
      reasoning_tokens: 3,
      cache_write_tokens: 0,
      usage_source: "endpoint",
      cost_usd: 0.0021,
      cost_estimated_usd: 0.0019,
      response_model: "gpt-4o-2024-08-06",
      response_id: null,
      system_fingerprint: null,
      finish_reason: "stop",
      refusal: false,
      raw_usage: null,
    });
    expect(usage.session).toMatchObject({
      reasoning_tokens: 3,
      cache_write_tokens: 0,
      cost_usd: 0.0021,
      reported_cost_count: 1,
      unpriced_count: 0,
    });
    expect(usage.turns[0]).toMatchObject({ turn_index: 1, cost_usd: 0.0021 });
  });

  it("GET /messages carries reasoning and refusal (null when none)", async () => {
    const id = await createSession();
    lab.store.startTurn(id, { turn_index: 1, user_message: "hi" });
    lab.store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: "4", reasoning: "2 + 2 is 4" },
    });
    lab.store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: "", refusal: "I can't help with that." },
    });
    const body = (await (await lab.api(`/api/sessions/${id}/messages`)).json()) as {
      messages: MessageRecord[];
    };
    const [answer, refused] = body.messages.filter((message) => message.role === "assistant");
    expect(answer).toMatchObject({ content: "4", reasoning: "2 + 2 is 4", refusal: null });
    expect(refused).toMatchObject({ reasoning: null, refusal: "I can't help with that." });
  });

  it("streams usage events with cost, source and served model", async () => {
    const id = await createSession();
    const events = await runTurn(id, "search for agent lab");
    const usage = events.find(
      (event) => event.type === "usage" && event.call_kind === "chat_completion",
    );
    expect(usage).toMatchObject({
      usage_source: expect.stringMatching(/^(endpoint|estimated)$/),
      cost_usd: 0,
      cost_source: "estimated",
      usage: { reasoning_tokens: 0, cache_write_tokens: 0 },
    });
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "turn_end", usage: { cost_usd: 0, unpriced_count: 0 } });
  });
});

describe("OpenAPI: the issue-11 shapes", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  interface Schema {
    properties?: Record<string, Schema>;
    items?: Schema;
    oneOf?: Schema[];
    required?: string[];
  }

  it("documents every field the API sends for usage, messages, payloads and turn events", async () => {
    const document = (await (await lab.api("/api/openapi.json")).json()) as {
      components: { schemas: Record<string, Schema> };
    };
    const { schemas } = document.components;
    const callFields = Object.keys(schemas.UsageCall?.properties ?? {});
    expect(callFields).toEqual(
      expect.arrayContaining([
        "reasoning_tokens",
        "cache_write_tokens",
        "usage_source",
        "cost_usd",
        "cost_estimated_usd",
        "response_model",
        "response_id",
        "system_fingerprint",
        "finish_reason",
        "refusal",
        "raw_usage",
      ]),
    );
    expect(Object.keys(schemas.UsageRollups?.properties?.session?.properties ?? {})).toEqual(
      expect.arrayContaining([
        "reasoning_tokens",
        "cache_write_tokens",
        "cost_usd",
        "reported_cost_count",
        "unpriced_count",
      ]),
    );
    expect(Object.keys(schemas.Message?.properties ?? {})).toEqual(
      expect.arrayContaining(["reasoning", "refusal"]),
    );
    expect(schemas.CallPayload?.required).toEqual(
      expect.arrayContaining(["request_body", "response_body", "response_truncated"]),
    );
    const variants = new Map(
      (schemas.TurnEvent?.oneOf ?? []).map((variant) => [
        (variant.properties?.type as { const?: string } | undefined)?.const,
        variant,
      ]),
    );
    expect(variants.has("reasoning_delta")).toBe(true);
    expect(variants.has("refusal_delta")).toBe(true);
    const usage = variants.get("usage");
    expect(Object.keys(usage?.properties ?? {})).toEqual(
      expect.arrayContaining(["usage_source", "cost_usd", "cost_source", "response_model"]),
    );
  });
});
