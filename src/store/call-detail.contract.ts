import { expect, it } from "vitest";
import { InvalidInputError, SessionNotFoundError, TurnNotFoundError } from "../domain/errors.js";
import type { UsageCallRecord } from "../domain/usage.js";
import { MAX_RAW_USAGE_BYTES } from "./raw-usage.js";
import type { SessionStore } from "./session-store.js";

/**
 * What real providers report beyond the four counts (schema v3), for any SessionStore: the
 * detail of each call, cost roll-ups, the token accounting every call keeps, and the reasoning
 * and refusal text of messages. Called inside `describeSessionStoreContract`.
 */
export function callDetailContract(getStore: () => SessionStore): void {
  async function session(store: SessionStore, id = "detail"): Promise<string> {
    await store.createSession({ title: id, config: {}, session_id: id });
    await store.startTurn(id, { turn_index: 1, user_message: "one" });
    return id;
  }

  const call = (metadata: Record<string, unknown>, usage: Record<string, number> = {}) => ({
    turn_index: 1,
    round_index: 1,
    usage: { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140, ...usage },
    elapsed_ms: 10,
    metadata,
  });

  it("keeps every provider detail of a call, and usageSummary returns it", async () => {
    const store = getStore();
    const id = await session(store);
    const counts = {
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      cached_tokens: 60,
      reasoning_tokens: 30,
      cache_write_tokens: 20,
    };
    const detail = {
      cost_usd: 0.00042,
      cost_estimated_usd: 0.0005,
      response_model: "openai/gpt-5-mini-2025-08-07",
      response_id: "gen-123",
      system_fingerprint: "fp_abc",
      finish_reason: "stop",
      refusal: true,
    };
    const raw = {
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      cost: 0.00042,
      completion_tokens_details: { reasoning_tokens: 30 },
      prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 20 },
    };
    expect(
      await store.appendUsage(id, {
        turn_index: 1,
        round_index: 1,
        usage: counts,
        ttft_ms: 80,
        elapsed_ms: 900,
        metadata: { metric_key: "chat:1:1", ...detail, raw_usage: raw },
      }),
    ).toBe(true);
    const [stored] = (await store.usageSummary(id)).calls;
    expect(stored).toMatchObject({
      ...counts,
      ...detail,
      estimated: false,
      usage_source: "endpoint",
      ttft_ms: 80,
      elapsed_ms: 900,
    } satisfies Partial<UsageCallRecord>);
    expect(stored?.raw_usage).toStrictEqual(raw);
  });

  it("keeps the usage source and `estimated` consistent: a given source wins", async () => {
    const store = getStore();
    const id = await session(store);
    const cases: [Record<string, unknown>, string, boolean][] = [
      [{}, "endpoint", false],
      [{ estimated: true }, "estimated", true],
      [{ usage_source: "provider_timings" }, "provider_timings", false],
      [{ usage_source: "estimated" }, "estimated", true],
      [{ usage_source: "endpoint", estimated: true }, "endpoint", false],
      [{ usage_source: "provider_timings", estimated: true }, "provider_timings", false],
    ];
    for (const [index, [metadata]] of cases.entries()) {
      await store.appendUsage(id, call({ ...metadata, metric_key: `k${index}` }));
    }
    const calls = (await store.usageSummary(id)).calls;
    expect(calls.map((stored) => [stored.usage_source, stored.estimated])).toStrictEqual(
      cases.map(([, source, estimated]) => [source, estimated]),
    );
    expect((await store.usageRollups(id)).session.estimated_count).toBe(2);
    await expect(async () =>
      store.appendUsage(id, call({ usage_source: "guessed" })),
    ).rejects.toThrow(/appendUsage: metadata\.usage_source/);
  });

  it("rolls up reasoning, cache writes and cost: reported beats estimated, unpriced model calls counted", async () => {
    const store = getStore();
    const id = await session(store);
    await store.startTurn(id, { turn_index: 2, user_message: "two" });
    await store.startTurn(id, { turn_index: 3, user_message: "three" });
    const withTokens = { cached_tokens: 10, cache_write_tokens: 5, reasoning_tokens: 8 };
    // Turn 1: reported (wins over its estimate), estimated only, unpriced, and a free tool run.
    await store.appendUsage(id, call({ cost_usd: 0.25, cost_estimated_usd: 9 }, withTokens));
    await store.appendUsage(id, call({ cost_estimated_usd: 0.125 }, withTokens));
    await store.appendUsage(id, call({ agent: "event_agent", call_kind: "argument_fallback" }));
    await store.appendUsage(id, call({ agent: "event_kernel", call_kind: "tool_execution" }));
    // Turn 2: a cost of exactly 0 is a cost (a free model), not a missing one.
    await store.appendUsage(id, { ...call({ cost_usd: 0 }), turn_index: 2 });
    // Turn 3: nothing priced.
    await store.appendUsage(id, { ...call({}), turn_index: 3 });

    const { turns, session: total } = await store.usageRollups(id);
    const costs = turns.map((turn) => ({
      turn_index: turn.turn_index,
      cost_usd: turn.cost_usd,
      reported_cost_count: turn.reported_cost_count,
      unpriced_count: turn.unpriced_count,
      reasoning_tokens: turn.reasoning_tokens,
      cache_write_tokens: turn.cache_write_tokens,
    }));
    expect(costs).toStrictEqual([
      {
        turn_index: 1,
        cost_usd: 0.375,
        reported_cost_count: 1,
        unpriced_count: 1,
        reasoning_tokens: 16,
        cache_write_tokens: 10,
      },
      {
        turn_index: 2,
        cost_usd: 0,
        reported_cost_count: 1,
        unpriced_count: 0,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
      },
      {
        turn_index: 3,
        cost_usd: null,
        reported_cost_count: 0,
        unpriced_count: 1,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
      },
    ]);
    expect(total).toMatchObject({
      cost_usd: 0.375,
      reported_cost_count: 2,
      unpriced_count: 2,
      reasoning_tokens: 16,
      cache_write_tokens: 10,
      tool_count: 1,
    });
    expect((await store.usageSummary(id)).session).toStrictEqual(total);
    // A session without a priced call has no cost at all, not a cost of 0.
    await store.createSession({ title: "free", config: {}, session_id: "unpriced" });
    await store.startTurn("unpriced", { turn_index: 1, user_message: "x" });
    await store.appendUsage("unpriced", call({}));
    expect((await store.usageRollups("unpriced")).session).toMatchObject({
      cost_usd: null,
      unpriced_count: 1,
    });
  });

  it("refuses a call whose counts break the token accounting, naming the field, storing nothing", async () => {
    const store = getStore();
    const id = await session(store);
    const before = await store.usageSummary(id);
    const cases: [Record<string, number>, RegExp][] = [
      [
        { prompt_tokens: 10, completion_tokens: 5, total_tokens: 20 },
        /appendUsage: usage\.total_tokens: is 20 but prompt_tokens \+ completion_tokens is 15/,
      ],
      [
        { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, reasoning_tokens: 6 },
        /appendUsage: usage\.reasoning_tokens: is 6, more than completion_tokens \(5\)/,
      ],
      [
        { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 11 },
        /appendUsage: usage\.cached_tokens: cached_tokens \+ cache_write_tokens is 11/,
      ],
      [
        {
          prompt_tokens: 10,
          completion_tokens: 5,
          total_tokens: 15,
          cached_tokens: 6,
          cache_write_tokens: 5,
        },
        /appendUsage: usage\.cache_write_tokens: .* is 11 \(6 \+ 5\), more than prompt_tokens \(10\)/,
      ],
    ];
    for (const [usage, message] of cases) {
      const attempt = async () =>
        store.appendUsage(id, { turn_index: 1, round_index: 1, usage, elapsed_ms: 1 });
      await expect(attempt).rejects.toThrow(message);
      await expect(attempt).rejects.toThrow(InvalidInputError);
    }
    expect(await store.usageSummary(id)).toStrictEqual(before);

    // The seed's own shape, a total with no split, has nothing to check; a tool run spends nothing.
    await store.appendUsage(id, {
      turn_index: 1,
      round_index: 1,
      usage: { total_tokens: 7 },
      elapsed_ms: 1,
    });
    await store.appendUsage(id, {
      ...call({ agent: "event_kernel", call_kind: "tool_execution" }),
      usage: { prompt_tokens: 1, total_tokens: 9, reasoning_tokens: 4 },
    });
    const calls = (await store.usageSummary(id)).calls;
    expect(calls.map((stored) => [stored.total_tokens, stored.reasoning_tokens])).toStrictEqual([
      [7, 0],
      [0, 0],
    ]);
  });

  it("keeps a raw usage object bounded and redacted, never failing the call for it", async () => {
    const store = getStore();
    const id = await session(store);
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let level = 0; level < 500; level++) deep = { nested: deep };
    const raws: Record<string, unknown>[] = [
      { padding: "x".repeat(MAX_RAW_USAGE_BYTES + 1) },
      deep,
      { total_tokens: 3, api_key: "sk-echoed-secret-value", note: "bad \ud800 text" },
    ];
    for (const [index, raw_usage] of raws.entries()) {
      expect(await store.appendUsage(id, call({ raw_usage, metric_key: `raw:${index}` }))).toBe(
        true,
      );
    }
    const kept = (await store.usageSummary(id)).calls.map((stored) => stored.raw_usage);
    expect(kept[0]?.omitted).toMatch(
      new RegExp(`^raw usage not kept: ${MAX_RAW_USAGE_BYTES + 15} bytes, over the`),
    );
    expect(kept[1]).toStrictEqual({
      omitted: "raw usage not kept: nested deeper than 64 levels",
    });
    expect(kept[2]).toStrictEqual({
      total_tokens: 3,
      api_key: "[redacted]",
      note: "bad \ufffd text",
    });
  });

  it("keeps an assistant's reasoning and refusal beside its content", async () => {
    const store = getStore();
    const id = await session(store);
    await store.appendMessage(id, { turn_index: 1, message: { role: "user", content: "hi" } });
    await store.appendMessages(id, {
      turn_index: 1,
      messages: [
        { role: "assistant", content: "42", reasoning: "6 times 7 \ud800" },
        { role: "assistant", content: "", refusal: "I can't help with that." },
        { role: "assistant", content: "plain", reasoning: "" },
      ],
    });
    const messages = await store.listMessages(id);
    expect(
      messages.map(({ content, reasoning, refusal }) => ({ content, reasoning, refusal })),
    ).toStrictEqual([
      { content: "hi", reasoning: null, refusal: null },
      { content: "42", reasoning: "6 times 7 \ufffd", refusal: null },
      { content: "", reasoning: null, refusal: "I can't help with that." },
      { content: "plain", reasoning: null, refusal: null },
    ]);
    await expect(async () =>
      store.appendMessage(id, {
        turn_index: 1,
        message: { role: "assistant", content: "x", reasoning: 5 as never },
      }),
    ).rejects.toThrow(/appendMessage: message\.reasoning/);
  });

  it("exports and imports the new message and call fields (version 2)", async () => {
    const store = getStore();
    const id = await session(store, "source");
    await store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: "a", reasoning: "r", refusal: "no" },
    });
    await store.appendUsage(
      id,
      call(
        {
          metric_key: "chat:1:1",
          usage_source: "provider_timings",
          cost_usd: 0.5,
          response_model: "served",
          finish_reason: "length",
          raw_usage: { timings: { cache_n: 138, prompt_n: 139 } },
        },
        { reasoning_tokens: 3, cache_write_tokens: 2 },
      ),
    );
    const document = JSON.parse(JSON.stringify(await store.exportSession(id)));
    expect(document.version).toBe(2);
    expect(document.messages[0]).toMatchObject({ reasoning: "r", refusal: "no" });
    await store.importSession(document, { session_id: "copy" });
    const strip = ({ id: _id, ...rest }: UsageCallRecord) => rest;
    expect((await store.usageSummary("copy")).calls.map(strip)).toStrictEqual(
      (await store.usageSummary("source")).calls.map(strip),
    );
    expect((await store.usageSummary("copy")).session).toStrictEqual(
      (await store.usageSummary("source")).session,
    );
    expect((await store.listMessages("copy")).map((message) => message.reasoning)).toStrictEqual([
      "r",
    ]);
  });

  it("keeps a call's payload compressed, once per metric key, and hands it back whole", async () => {
    const store = getStore();
    const id = await session(store);
    const request = JSON.stringify({
      model: "m",
      messages: Array.from({ length: 200 }, (_, index) => ({
        role: "user",
        content: `turn ${index} ü`,
      })),
    });
    const payload = {
      metric_key: "chat:1:1",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: request,
      response_body:
        'data: {"choices":[{"delta":{"content":"<event>x</event>"}}]}\n\ndata: [DONE]\n\n',
      request_bytes: Buffer.byteLength(request),
      response_bytes: 76,
      request_truncated: false,
      response_truncated: false,
    } as const;
    expect(await store.getCallPayload(id, "chat:1:1")).toBeNull();
    expect(await store.appendCallPayload(id, payload)).toBe(true);
    // A retry keeps the first.
    expect(await store.appendCallPayload(id, { ...payload, request_body: "other" })).toBe(false);
    const stored = await store.getCallPayload(id, "chat:1:1");
    expect(stored).toStrictEqual({
      session_id: id,
      metric_key: "chat:1:1",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: request,
      response_body: payload.response_body,
      request_bytes: payload.request_bytes,
      response_bytes: 76,
      request_truncated: false,
      response_truncated: false,
      stored_bytes: stored?.stored_bytes,
      created_at: stored?.created_at,
    });
    expect(stored?.stored_bytes).toBeGreaterThan(0);
    expect(stored?.stored_bytes).toBeLessThan(payload.request_bytes / 5);

    // A cut body: what was kept, and the full size it was cut from.
    expect(
      await store.appendCallPayload(id, {
        ...payload,
        metric_key: "chat:1:2",
        round_index: 2,
        agent: "event_agent",
        request_body: request.slice(0, 1024),
        request_truncated: true,
        response_body: "",
        response_bytes: 0,
      }),
    ).toBe(true);
    expect(await store.getCallPayload(id, "chat:1:2")).toMatchObject({
      round_index: 2,
      agent: "event_agent",
      request_body: request.slice(0, 1024),
      request_bytes: payload.request_bytes,
      request_truncated: true,
      response_body: "",
      response_truncated: false,
    });
    // A body given with its own bytes (a captured stream) is stored from them: it reads back as
    // the same text, as compact as one given as text alone.
    const streamed = `${'data: {"choices":[{"delta":{"content":"é€𝄞 "}}]}\n\n'.repeat(200)}data: [DONE]\n\n`;
    const utf8 = new TextEncoder().encode(streamed);
    expect(
      await store.appendCallPayload(id, {
        ...payload,
        metric_key: "chat:1:3",
        round_index: 3,
        response_body: streamed,
        response_utf8: utf8,
        response_bytes: utf8.length,
      }),
    ).toBe(true);
    const fromBytes = await store.getCallPayload(id, "chat:1:3");
    expect(fromBytes?.response_body).toBe(streamed);
    expect(fromBytes?.response_bytes).toBe(utf8.length);
    expect(fromBytes?.stored_bytes).toBeLessThan(utf8.length / 3);
    // Keys belong to their session.
    await session(store, "other");
    expect(await store.getCallPayload("other", "chat:1:1")).toBeNull();
    expect(await store.appendCallPayload("other", payload)).toBe(true);
  });

  it("refuses a payload for an unknown session, turn or shape, storing nothing", async () => {
    const store = getStore();
    const id = await session(store);
    const payload = {
      metric_key: "chat:1:1",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: "{}",
      response_body: "",
      request_bytes: 2,
      response_bytes: 0,
      request_truncated: false,
      response_truncated: false,
    } as const;
    await expect(async () => store.appendCallPayload("nobody", payload)).rejects.toThrow(
      SessionNotFoundError,
    );
    await expect(async () =>
      store.appendCallPayload(id, { ...payload, turn_index: 5 }),
    ).rejects.toThrow(TurnNotFoundError);
    await expect(async () =>
      store.appendCallPayload(id, { ...payload, metric_key: "" }),
    ).rejects.toThrow(/appendCallPayload: metric_key/);
    await expect(async () =>
      store.appendCallPayload(id, { ...payload, agent: "robot" as never }),
    ).rejects.toThrow(/appendCallPayload: agent/);
    await expect(async () =>
      store.appendCallPayload(id, { ...payload, request_bytes: -1 }),
    ).rejects.toThrow(/appendCallPayload: request_bytes/);
    expect(await store.getCallPayload(id, "chat:1:1")).toBeNull();
  });

  it("deleteSession removes the session's payloads and no other's; an export leaves them out", async () => {
    const store = getStore();
    const payload = {
      metric_key: "chat:1:1",
      turn_index: 1,
      round_index: 1,
      agent: "chat_agent",
      request_body: '{"model":"m"}',
      response_body: "data: [DONE]\n\n",
      request_bytes: 13,
      response_bytes: 14,
      request_truncated: false,
      response_truncated: false,
    } as const;
    for (const id of ["gone", "kept"]) {
      await session(store, id);
      await store.appendUsage(id, call({ metric_key: "chat:1:1" }));
      await store.appendCallPayload(id, payload);
    }
    const document = JSON.parse(JSON.stringify(await store.exportSession("gone")));
    expect(JSON.stringify(document)).not.toContain("data: [DONE]");
    await store.deleteSession("gone");
    expect(await store.getCallPayload("gone", "chat:1:1")).toBeNull();
    expect((await store.getCallPayload("kept", "chat:1:1"))?.response_body).toBe(
      "data: [DONE]\n\n",
    );
    // The id comes back with nothing of the old session's calls, and an import brings none.
    await store.importSession(document);
    expect((await store.usageSummary("gone")).calls).toHaveLength(1);
    expect(await store.getCallPayload("gone", "chat:1:1")).toBeNull();
    expect(await store.appendCallPayload("gone", payload)).toBe(true);
  });
}
