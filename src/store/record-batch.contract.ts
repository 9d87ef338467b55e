import { expect, it } from "vitest";
import { InvalidInputError, SessionNotFoundError, TurnNotFoundError } from "../domain/errors.js";
import type { SessionStore } from "./session-store.js";
import type { AppendRecordsOptions } from "./store-inputs.js";

/**
 * `appendRecords`, for any SessionStore: a round's messages, usage, audit and payloads written
 * together or not at all, validated entry by entry as the single-row methods validate them.
 * Called inside `describeSessionStoreContract`.
 */
export function recordBatchContract(getStore: () => SessionStore): void {
  async function session(store: SessionStore, id = "batch"): Promise<string> {
    await store.createSession({ title: id, config: {}, session_id: id });
    await store.startTurn(id, { turn_index: 1, user_message: "one" });
    return id;
  }

  const usage = (metric_key: string, counts: Record<string, number> = {}) => ({
    turn_index: 1,
    round_index: 1,
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, ...counts },
    elapsed_ms: 3,
    metadata: { metric_key },
  });
  const payload = (metric_key: string) => ({
    metric_key,
    turn_index: 1,
    round_index: 1,
    agent: "chat_agent" as const,
    request_body: '{"messages":[]}',
    response_body: "data: [DONE]",
    request_bytes: 15,
    response_bytes: 12,
    request_truncated: false,
    response_truncated: false,
  });
  const round = (): AppendRecordsOptions => ({
    message_groups: [
      {
        turn_index: 1,
        messages: [
          {
            role: "assistant",
            content: "",
            tool_calls: [{ id: "c1", name: "mock_search", arguments: {}, raw_arguments: "{}" }],
          },
          { role: "tool", content: "{}", name: "mock_search", tool_call_id: "c1" },
        ],
      },
    ],
    usage: [usage("chat:1:1"), usage("tool:1:1:c1")],
    audit: [
      { event: "chat_agent_request", details: { messages: 1 }, turn_index: 1, round_index: 1 },
      { event: "tool_end", details: { ok: true }, turn_index: 1, round_index: 1 },
    ],
    payloads: [payload("chat:1:1")],
  });

  const snapshot = async (store: SessionStore, id: string) => ({
    messages: await store.listMessages(id),
    audit: await store.listAuditLogs(id),
    calls: (await store.usageSummary(id)).calls,
    payload: await store.getCallPayload(id, "chat:1:1"),
    session: await store.getSession(id),
  });

  it("appendRecords writes a round's messages, usage, audit and payloads, and moves updated_at once", async () => {
    const store = getStore();
    const id = await session(store);
    const before = (await store.getSession(id))?.updated_at ?? "";
    const result = await store.appendRecords(id, round());
    expect(result).toEqual({
      usage_inserted: [true, true],
      payloads_inserted: [true],
      turn_rollup: null,
      updated_at: expect.any(String),
    });

    const { messages, audit, calls, payload, session: stored } = await snapshot(store, id);
    expect(messages.map((message) => [message.role, message.tool_call_id])).toEqual([
      ["assistant", null],
      ["tool", "c1"],
    ]);
    expect(audit.map((entry) => [entry.event, entry.round_index, entry.details])).toEqual([
      ["chat_agent_request", 1, { messages: 1 }],
      ["tool_end", 1, { ok: true }],
    ]);
    expect(calls.map((call) => [call.metric_key, call.total_tokens])).toEqual([
      ["chat:1:1", 15],
      ["tool:1:1:c1", 15],
    ]);
    expect(payload).toMatchObject({
      request_body: '{"messages":[]}',
      response_body: "data: [DONE]",
    });
    expect((stored?.updated_at ?? "") >= before).toBe(true);
    // Every row of the batch carries the one time the batch was written.
    const times = new Set([...messages, ...audit, ...calls].map((row) => row.created_at));
    expect(times.size).toBe(1);
    expect(stored?.updated_at).toBe([...times][0]);
    expect(result.updated_at).toBe(stored?.updated_at);
  });

  it("appendRecords is idempotent by metric key: a retried round inserts no usage or payload twice", async () => {
    const store = getStore();
    const id = await session(store);
    await store.appendRecords(id, { usage: [usage("chat:1:1")] });
    const result = await store.appendRecords(id, {
      usage: [usage("chat:1:1"), usage("chat:1:2"), usage("chat:1:2")],
      payloads: [payload("chat:1:1"), payload("chat:1:1")],
    });
    expect(result).toEqual({
      usage_inserted: [false, true, false],
      payloads_inserted: [true, false],
      turn_rollup: null,
      updated_at: expect.any(String),
    });
    expect((await store.usageSummary(id)).calls.map((call) => call.metric_key)).toEqual([
      "chat:1:1",
      "chat:1:2",
    ]);
  });

  it("appendRecords redacts audit details as appendAudit does", async () => {
    const store = getStore();
    const id = await session(store);
    const details = { authorization: "Bearer sk-live-0123456789abcdefghijklmnop", note: "ok" };
    await store.appendRecords(id, { audit: [{ event: "batched", details, turn_index: 1 }] });
    await store.appendAudit(id, { event: "single", details, turn_index: 1 });
    const [batched, single] = await store.listAuditLogs(id);
    expect(batched?.details).toEqual(single?.details);
    expect(JSON.stringify(batched?.details)).not.toContain("sk-live-0123456789");
  });

  it("appendRecords refuses the whole batch for one bad entry, naming it, and writes nothing", async () => {
    const store = getStore();
    const id = await session(store);
    const before = await snapshot(store, id);
    const bad = round();
    bad.usage = [usage("chat:1:1"), usage("chat:1:2", { total_tokens: 99 })];
    const refusal = await Promise.resolve()
      .then(() => store.appendRecords(id, bad))
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InvalidInputError);
    // The single-row method's own message, under the entry's index.
    const single = await Promise.resolve()
      .then(() => store.appendUsage(id, usage("chat:1:2", { total_tokens: 99 })))
      .catch((error: unknown) => error);
    const detail = (single as Error).message.replace(/^appendUsage: /, "");
    expect((refusal as Error).message).toBe(`appendRecords: usage.1.${detail}`);
    expect((refusal as Error).message).toMatch(/usage\.1\.usage\.total_tokens: is 99/);
    expect(await snapshot(store, id)).toEqual(before);

    const emptyGroup = { ...round(), message_groups: [{ turn_index: 1, messages: [] }] };
    await expect(Promise.resolve().then(() => store.appendRecords(id, emptyGroup))).rejects.toThrow(
      /appendRecords: message_groups\.0\.messages: a message group holds at least one message/,
    );
    const badAudit = { ...round(), audit: [{ event: "", turn_index: 1 }] };
    await expect(Promise.resolve().then(() => store.appendRecords(id, badAudit))).rejects.toThrow(
      /appendRecords: audit\.0\.event/,
    );
    expect(await snapshot(store, id)).toEqual(before);
  });

  it("appendRecords refuses an unknown session or turn and writes nothing", async () => {
    const store = getStore();
    const id = await session(store);
    const before = await snapshot(store, id);
    await expect(
      Promise.resolve().then(() => store.appendRecords("missing", round())),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
    const laterTurn = round();
    laterTurn.usage = [usage("chat:1:1"), { ...usage("chat:2:1"), turn_index: 2 }];
    const refusal = await Promise.resolve()
      .then(() => store.appendRecords(id, laterTurn))
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TurnNotFoundError);
    expect((refusal as Error).message).toMatch(/turn 2/);
    expect(await snapshot(store, id)).toEqual(before);
  });

  it("appendRecords with nothing in it writes nothing and leaves updated_at alone", async () => {
    const store = getStore();
    const id = await session(store);
    const before = await snapshot(store, id);
    expect(await store.appendRecords(id, {})).toEqual({
      usage_inserted: [],
      payloads_inserted: [],
      turn_rollup: null,
      updated_at: null,
    });
    expect(await snapshot(store, id)).toEqual(before);
  });

  it("appendRecords with touch_session false writes the round, leaves updated_at, and still refuses unknown sessions and turns", async () => {
    const store = getStore();
    const id = await session(store);
    const before = (await store.getSession(id))?.updated_at;
    // A later clock tick could only make a moved updated_at visible, never hide one.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const result = await store.appendRecords(id, { ...round(), touch_session: false });
    expect(result).toEqual({
      usage_inserted: [true, true],
      payloads_inserted: [true],
      turn_rollup: null,
      updated_at: null,
    });
    const written = await snapshot(store, id);
    expect(written.session?.updated_at).toBe(before);
    expect(written.messages.map((message) => message.role)).toEqual(["assistant", "tool"]);
    expect(written.calls).toHaveLength(2);
    expect(written.audit.map((entry) => entry.event)).toEqual(["chat_agent_request", "tool_end"]);

    await expect(
      Promise.resolve().then(() =>
        store.appendRecords("missing", { ...round(), touch_session: false }),
      ),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
    const laterTurn = { ...round(), touch_session: false };
    laterTurn.message_groups = [{ turn_index: 2, messages: [{ role: "user", content: "x" }] }];
    laterTurn.usage = [];
    laterTurn.payloads = [];
    await expect(
      Promise.resolve().then(() => store.appendRecords(id, laterTurn)),
    ).rejects.toBeInstanceOf(TurnNotFoundError);
    expect(await snapshot(store, id)).toEqual(written);

    // An end moves updated_at whatever the flag says.
    const ended = await store.appendRecords(id, {
      touch_session: false,
      complete_turn: { turn_index: 1, wall_time_ms: 1 },
    });
    expect(ended.updated_at).not.toBeNull();
    expect((await store.getSession(id))?.updated_at).toBe(ended.updated_at);
    expect(ended.updated_at).not.toBe(before);
    await expect(
      Promise.resolve().then(() => store.appendRecords(id, { touch_session: "no" } as never)),
    ).rejects.toThrow(/appendRecords: touch_session/);
  });

  it("appendRecords rolls up the turn it is asked for from that turn's calls, as usageRollups does", async () => {
    const store = getStore();
    const id = await session(store);
    await store.appendRecords(id, { usage: [usage("chat:1:1", { cached_tokens: 4 })] });
    await store.completeTurn(id, { turn_index: 1, wall_time_ms: 12.5 });
    await store.startTurn(id, { turn_index: 2, user_message: "two" });
    const second = (key: string, elapsed_ms: number) => ({
      ...usage(key),
      turn_index: 2,
      elapsed_ms,
      metadata: { metric_key: key, cost_usd: 0.1, cost_estimated_usd: 0.3 },
    });
    const { turn_rollup } = await store.appendRecords(id, {
      usage: [
        second("chat:2:1", 0.1),
        second("chat:2:2", 0.2),
        { ...second("t", 1), metadata: { metric_key: "t", call_kind: "tool_execution" } },
      ],
      rollup_turn: 2,
    });
    const { turns } = await store.usageRollups(id);
    expect(turn_rollup).toStrictEqual(turns[1]);
    expect(turn_rollup).toMatchObject({
      turn_index: 2,
      call_count: 3,
      tool_count: 1,
      total_tokens: 30,
    });
    // A turn with no calls yet reads zeros; an unknown one refuses the batch.
    await store.startTurn(id, { turn_index: 3, user_message: "three" });
    const third = (await store.appendRecords(id, { rollup_turn: 3 })).turn_rollup;
    expect(third).toStrictEqual((await store.usageRollups(id)).turns[2]);
    expect(third).toMatchObject({ turn_index: 3, call_count: 0, turn_wall_time_ms: null });
    await expect(
      Promise.resolve().then(() => store.appendRecords(id, { rollup_turn: 9 })),
    ).rejects.toBeInstanceOf(TurnNotFoundError);
  });

  it("appendRecords ends the turn with its last rows (complete_turn), or not at all", async () => {
    const store = getStore();
    const id = await session(store);
    const end = { turn_index: 1, wall_time_ms: 42, status: "max_rounds" as const };
    const bad = { ...round(), usage: [usage("k", { total_tokens: 1 })], complete_turn: end };
    await expect(Promise.resolve().then(() => store.appendRecords(id, bad))).rejects.toThrow(
      /appendRecords: usage\.0\.usage\.total_tokens/,
    );
    expect((await store.listTurns(id))[0]).toMatchObject({ status: "running", completed_at: null });
    const { turn_rollup } = await store.appendRecords(id, {
      ...round(),
      complete_turn: end,
      rollup_turn: 1,
    });
    expect((await store.listTurns(id))[0]).toMatchObject({
      status: "max_rounds",
      wall_time_ms: 42,
    });
    expect(turn_rollup).toMatchObject({ call_count: 2, turn_wall_time_ms: 42 });
    await expect(
      Promise.resolve().then(() =>
        store.appendRecords(id, { complete_turn: { ...end, turn_index: 7 } }),
      ),
    ).rejects.toBeInstanceOf(TurnNotFoundError);
  });
}
