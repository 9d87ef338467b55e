import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { MAX_CONFIG_DEPTH } from "../domain/json-limits.js";
import { tokenUsage } from "../domain/usage.js";
import {
  type RuntimeClaim,
  type RuntimeRecords,
  runtimeClaim,
  runtimeRecords,
} from "./runtime-records.js";
import { SqliteSessionStore } from "./sqlite/sqlite-session-store.js";

/**
 * A batch the runtime built (`runtimeRecords`) is written without the walk and copy a caller's
 * input gets, but not unchecked: every value a type cannot state is still checked, a failing one
 * sends the batch through the full check, and the refusal is the one any caller would get.
 */

/** A value nested `levels` objects deep. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) value = { inner: value };
  return value;
}

/** A turn's round as the runtime writes it: a tool call and its reply, the answer's end. */
function roundBatch(turn_index: number): RuntimeRecords {
  const call = {
    id: "call_1",
    name: "mock_search",
    arguments: { query: "wal" },
    raw_arguments: '{"query":"wal"}',
  };
  const metadata = {
    agent: "chat_agent",
    call_kind: "chat_completion",
    event_id: null,
    event_name: null,
    used_fallback: false,
    tool_latency_ms: null,
    metric_key: `chat:${turn_index}:1`,
    estimated: false,
    usage_source: "endpoint",
    cost_usd: null,
    cost_estimated_usd: 0.0001,
    response_model: "sim-1",
    response_id: "resp_1",
    system_fingerprint: null,
    finish_reason: "tool_calls",
    refusal: false,
    raw_usage: { prompt_tokens: 12 },
  } as const;
  return {
    message_groups: [
      {
        turn_index,
        messages: [
          { role: "assistant", content: "Looking.", tool_calls: [call] },
          { role: "tool", content: '{"hits":3}', tool_call_id: "call_1", tool_calls: [] },
        ],
      },
    ],
    usage: [
      {
        turn_index,
        round_index: 1,
        usage: tokenUsage({ prompt_tokens: 12, completion_tokens: 5, cached_tokens: 4 }),
        ttft_ms: 3.5,
        elapsed_ms: 9.25,
        metadata,
      },
      {
        turn_index,
        round_index: 1,
        usage: tokenUsage(),
        ttft_ms: null,
        elapsed_ms: 1.5,
        metadata: {
          ...metadata,
          agent: "event_kernel",
          call_kind: "tool_execution",
          event_id: "call_1",
          event_name: "mock_search",
          tool_latency_ms: 1.5,
          metric_key: `tool:${turn_index}:1:call_1`,
          cost_estimated_usd: null,
          response_model: null,
          response_id: null,
          finish_reason: null,
          raw_usage: null,
        },
      },
    ],
    audit: [
      { event: "tool_start", details: { event_id: "call_1" }, turn_index, round_index: 1 },
      {
        event: "turn_end",
        details: { status: "completed", token: "sk-abcdefghijklmnopqrstuvwx" },
        turn_index,
        round_index: null,
      },
    ],
    payloads: [],
    touch_session: true,
    rollup_turn: turn_index,
    complete_turn: { turn_index, wall_time_ms: 20.5, status: "completed" },
  };
}

/** What a session holds, without what differs between two sessions written alike. */
async function holdings(store: SqliteSessionStore, sessionId: string) {
  const strip = (rows: object[]) =>
    rows.map((row) => {
      const {
        id: _id,
        session_id: _session,
        created_at: _at,
        ...rest
      } = row as Record<string, unknown>;
      return rest;
    });
  return {
    messages: strip(await store.listMessages(sessionId)),
    audit: strip(await store.listAuditLogs(sessionId)),
    calls: strip((await store.usageSummary(sessionId)).calls),
    turns: (await store.listTurns(sessionId)).map(
      ({ started_at: _started, completed_at: _completed, ...rest }) => rest,
    ),
  };
}

describe("runtime records", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let store: SqliteSessionStore;
  beforeEach(() => {
    directory = temporaryDirectory();
    store = new SqliteSessionStore(join(directory.path, "lab.sqlite3"));
    for (const id of ["vouched", "checked"]) {
      store.createSession({ session_id: id, title: id });
      store.claimTurn(id, { user_message: "search for wal", runner: "test" });
    }
  });
  afterEach(() => {
    store.close();
    directory.remove();
  });

  it("are written exactly as the same batch checked whole", async () => {
    const vouched = store.appendRecords("vouched", runtimeRecords(roundBatch(1)));
    const checked = store.appendRecords("checked", structuredClone(roundBatch(1)));
    expect(vouched).toEqual({ ...checked, updated_at: vouched.updated_at });
    expect(vouched.turn_rollup?.call_count).toBe(2);
    const written = await holdings(store, "vouched");
    expect(written).toEqual(await holdings(store, "checked"));
    // Redacted and serialized by the same row builders.
    expect(written.audit.at(-1)?.details).toEqual({ status: "completed", token: "[redacted]" });
    expect(written.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
  });

  it("with `estimated` at odds with the source are stored as the schema would make them", async () => {
    const odd = (batch: RuntimeRecords) => {
      const [call] = batch.usage;
      if (call) call.metadata = { ...call.metadata, estimated: true };
      return batch;
    };
    store.appendRecords("vouched", runtimeRecords(odd(roundBatch(1))));
    store.appendRecords("checked", odd(roundBatch(1)));
    const [vouched] = (await store.usageSummary("vouched")).calls;
    expect(vouched).toMatchObject({ estimated: false, usage_source: "endpoint" });
    expect(await holdings(store, "vouched")).toEqual(await holdings(store, "checked"));
  });

  const BROKEN: [string, (batch: RuntimeRecords) => void][] = [
    ["a turn index of 0", (b) => Object.assign(b.usage[0] ?? {}, { turn_index: 0 })],
    ["a negative elapsed time", (b) => Object.assign(b.usage[0] ?? {}, { elapsed_ms: -1 })],
    [
      "a time to first token of NaN",
      (b) => Object.assign(b.usage[0] ?? {}, { ttft_ms: Number.NaN }),
    ],
    [
      "a fractional token count",
      (b) => Object.assign(b.usage[0]?.usage ?? {}, { cached_tokens: 1.5 }),
    ],
    [
      "a total that is not prompt + completion",
      (b) => Object.assign(b.usage[0]?.usage ?? {}, { total_tokens: 99 }),
    ],
    [
      "a response model of 501 characters",
      (b) => Object.assign(b.usage[0]?.metadata ?? {}, { response_model: "m".repeat(501) }),
    ],
    [
      "a finish reason of 101 characters",
      (b) => Object.assign(b.usage[0]?.metadata ?? {}, { finish_reason: "f".repeat(101) }),
    ],
    ["an empty metric key", (b) => Object.assign(b.usage[1]?.metadata ?? {}, { metric_key: "" })],
    [
      "a negative reported cost",
      (b) => Object.assign(b.usage[0]?.metadata ?? {}, { cost_usd: -0.5 }),
    ],
    [
      "raw usage that is an array",
      (b) => Object.assign(b.usage[0]?.metadata ?? {}, { raw_usage: [1] }),
    ],
    ["an empty audit event", (b) => Object.assign(b.audit[0] ?? {}, { event: "" })],
    [
      "audit details too deep",
      (b) => Object.assign(b.audit[0] ?? {}, { details: nested(MAX_CONFIG_DEPTH + 1) }),
    ],
    [
      "tool arguments too deep",
      (b) =>
        Object.assign(b.message_groups[0]?.messages[0]?.tool_calls[0] ?? {}, {
          arguments: nested(MAX_CONFIG_DEPTH + 1),
        }),
    ],
    [
      "a tool message with no tool_call_id",
      (b) => {
        delete b.message_groups[0]?.messages[1]?.tool_call_id;
      },
    ],
    [
      "tool calls on a tool message",
      (b) =>
        Object.assign(b.message_groups[0]?.messages[1] ?? {}, {
          tool_calls: b.message_groups[0]?.messages[0]?.tool_calls,
        }),
    ],
    ["an empty message group", (b) => Object.assign(b.message_groups[0] ?? {}, { messages: [] })],
    ["a negative wall time", (b) => Object.assign(b.complete_turn ?? {}, { wall_time_ms: -3 })],
    ["a roll-up of turn 0", (b) => Object.assign(b, { rollup_turn: 0 })],
  ];

  it.each(BROKEN)(
    "with %s are refused as any caller's batch, and nothing is written",
    async (_, breakIt) => {
      const refusal = (sessionId: string, vouch: boolean) => {
        const batch = roundBatch(1);
        breakIt(batch);
        try {
          store.appendRecords(sessionId, vouch ? runtimeRecords(batch) : batch);
        } catch (error) {
          return (error as Error).message;
        }
        return null;
      };
      const before = await holdings(store, "vouched");
      const message = refusal("vouched", true);
      expect(message).not.toBeNull();
      expect(message).toBe(refusal("checked", false));
      expect(await holdings(store, "vouched")).toEqual(before);
    },
  );

  describe("a turn's claim", () => {
    const claim = (): RuntimeClaim => ({
      user_message: "and now?",
      runner: "test",
      is_runner_alive: () => false,
      audit: { event: "turn_start", details: { mode: "chat_agent_tools", api_key: "hidden" } },
    });
    const finish = (sessionId: string) =>
      store.appendRecords(sessionId, {
        complete_turn: { turn_index: 1, wall_time_ms: 1, status: "completed" },
      });

    it("claims the same turn, with the same rows, as the claim checked whole", async () => {
      finish("vouched");
      finish("checked");
      const vouched = store.claimTurn("vouched", runtimeClaim(claim()));
      expect(vouched).toEqual(
        store.claimTurn("checked", structuredClone({ ...claim(), is_runner_alive: undefined })),
      );
      expect(vouched.turn_index).toBe(2);
      const written = await holdings(store, "vouched");
      expect(written).toEqual(await holdings(store, "checked"));
      expect(written.audit.at(-1)?.details).toEqual({
        mode: "chat_agent_tools",
        api_key: "[redacted]",
      });
    });

    const BROKEN_CLAIMS: [string, (claim: RuntimeClaim) => void][] = [
      ["an empty runner", (c) => Object.assign(c, { runner: "" })],
      ["a message with a lone surrogate", (c) => Object.assign(c, { user_message: "a\ud800b" })],
      ["an empty audit event", (c) => Object.assign(c.audit ?? {}, { event: "" })],
      [
        "audit details too deep",
        (c) => Object.assign(c.audit ?? {}, { details: nested(MAX_CONFIG_DEPTH + 1) }),
      ],
    ];

    it.each(BROKEN_CLAIMS)(
      "with %s: as the claim checked whole would have it",
      async (_, breakIt) => {
        const outcome = (sessionId: string, vouch: boolean) => {
          finish(sessionId);
          const input = claim();
          breakIt(input);
          try {
            return store.claimTurn(sessionId, vouch ? runtimeClaim(input) : input);
          } catch (error) {
            return (error as Error).message;
          }
        };
        expect(outcome("vouched", true)).toEqual(outcome("checked", false));
        expect(await holdings(store, "vouched")).toEqual(await holdings(store, "checked"));
      },
    );
  });
});
