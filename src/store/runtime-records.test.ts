import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { deep, outcome } from "../../test/store/probes.js";
import { MAX_CONFIG_DEPTH } from "../domain/json-limits.js";
import { tokenUsage, UsageMetadata } from "../domain/usage.js";
import { parseInput } from "../domain/validation.js";
import { parseAppendRecords, parseClaimTurn } from "./fast-inputs.js";
import { TOKEN_KEYS } from "./input-checks.js";
import {
  type RuntimeClaim,
  type RuntimeRecords,
  runtimeClaim,
  runtimeRecords,
  vouchedClaim,
  vouchedRecords,
} from "./runtime-records.js";
import { SqliteSessionStore } from "./sqlite/sqlite-session-store.js";
import { AppendRecordsOptions, ClaimTurnOptions } from "./store-inputs.js";

/**
 * A batch the runtime built (`runtimeRecords`) is written without the walk and copy a caller's
 * input gets, but not unchecked: every value a type cannot state is still checked, a failing one
 * sends the batch through the full check, and the refusal is the one any caller would get.
 */

/** A turn's round as the runtime writes it: a tool call and its reply, the answer's end. */
function roundBatch(turn_index: number): RuntimeRecords {
  const call = {
    id: "call_1",
    name: "mock_search",
    arguments: { query: "wal" },
    raw_arguments: '{"query":"wal"}',
  };
  const metadata = {
    ...UsageMetadata.parse({}),
    usage_source: "endpoint",
    metric_key: `chat:${turn_index}:1`,
    cost_estimated_usd: 0.0001,
    response_model: "sim-1",
    response_id: "resp_1",
    finish_reason: "tool_calls",
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

  it("with tool arguments holding an own __proto__ are stored as the schema would make them", async () => {
    const polluted = (batch: RuntimeRecords) => {
      const [call] = batch.message_groups[0]?.messages[0]?.tool_calls ?? [];
      if (call) call.arguments = JSON.parse('{"__proto__":{"polluted":1},"q":"a"}');
      return batch;
    };
    store.appendRecords("vouched", runtimeRecords(polluted(roundBatch(1))));
    store.appendRecords("checked", polluted(roundBatch(1)));
    // As the file holds them, not as a read (which checks them again) gives them back.
    const file = new Database(join(directory.path, "lab.sqlite3"), { readonly: true });
    try {
      const stored = file
        .prepare("SELECT tool_calls_json FROM messages WHERE session_id = ? AND role = 'assistant'")
        .pluck();
      expect(stored.get("vouched")).toBe(stored.get("checked"));
      expect(JSON.parse(stored.get("vouched") as string)[0].arguments).toEqual({ q: "a" });
    } finally {
      file.close();
    }
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
      (b) => Object.assign(b.audit[0] ?? {}, { details: deep(MAX_CONFIG_DEPTH + 1) }),
    ],
    [
      "tool arguments too deep",
      (b) =>
        Object.assign(b.message_groups[0]?.messages[0]?.tool_calls[0] ?? {}, {
          arguments: deep(MAX_CONFIG_DEPTH + 1),
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
        (c) => Object.assign(c.audit ?? {}, { details: deep(MAX_CONFIG_DEPTH + 1) }),
      ],
      [
        "an expected incarnation that is no integer",
        (c) => Object.assign(c, { expected: { updated_at: "2026-12-05", incarnation: 1.5 } }),
      ],
    ];

    it.each(BROKEN_CLAIMS)(
      "with %s: as the claim checked whole would have it",
      async (_, breakIt) => {
        const claimed = (sessionId: string, vouch: boolean) => {
          finish(sessionId);
          const input = claim();
          breakIt(input);
          try {
            return store.claimTurn(sessionId, vouch ? runtimeClaim(input) : input);
          } catch (error) {
            return (error as Error).message;
          }
        };
        const vouched = claimed("vouched", true);
        expect(typeof vouched).toBe("string");
        expect(vouched).toEqual(claimed("checked", false));
        expect(await holdings(store, "vouched")).toEqual(await holdings(store, "checked"));
      },
    );
  });

  it("take the runtime's batch and claim as they are, without the full check", () => {
    const batch = roundBatch(1);
    expect(vouchedRecords(runtimeRecords(batch))).toBe(batch);
    expect(vouchedRecords(roundBatch(1))).toBeNull();
    const claim = { user_message: "hi", runner: "test" };
    expect(vouchedClaim(runtimeClaim(claim))).toBe(claim);
    expect(vouchedClaim({ ...claim })).toBeNull();
  });
});

/** Values of each field's type that break one constraint or another (null where it may be null). */
const NUMBERS = [0, -1, 1.5, 3, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60];
const STRINGS = ["", "text", "\ud800", "x".repeat(101), "x".repeat(501)];
const RECORDS = () => [
  {},
  { a: 1 },
  [],
  Object.create(null),
  new Date(0),
  { [Symbol("s")]: 1 },
  Object.defineProperty({}, "hidden", { value: 1, enumerable: false }),
  JSON.parse('{"__proto__": {"a": 1}}'),
  deep(64),
  deep(65),
];
const NULLABLE = new Set([
  "ttft_ms",
  "tool_latency_ms",
  "wall_time_ms",
  "cost_usd",
  "cost_estimated_usd",
  "event_id",
  "event_name",
  "metric_key",
  "response_model",
  "response_id",
  "system_fingerprint",
  "finish_reason",
  "raw_usage",
]);
const FIELDS: Record<string, () => unknown[]> = {
  ...Object.fromEntries(
    [
      "turn_index",
      "round_index",
      "rollup_turn",
      "elapsed_ms",
      "ttft_ms",
      "tool_latency_ms",
      "wall_time_ms",
      "cost_usd",
      "cost_estimated_usd",
      ...TOKEN_KEYS,
      "request_bytes",
      "response_bytes",
      "incarnation",
    ].map((key) => [key, () => NUMBERS]),
  ),
  ...Object.fromEntries(
    [
      "event",
      "event_id",
      "event_name",
      "metric_key",
      "id",
      "name",
      "tool_call_id",
      "response_model",
      "response_id",
      "system_fingerprint",
      "finish_reason",
      "content",
      "raw_arguments",
      "user_message",
      "runner",
      "updated_at",
    ].map((key) => [key, () => STRINGS]),
  ),
  details: RECORDS,
  arguments: RECORDS,
  raw_usage: RECORDS,
};

/**
 * An outcome as the rows would hold it: its JSON text (details, arguments and raw usage are stored
 * as JSON; a hidden key, which JSON leaves out as zod's copy does, is in neither row), or the
 * refusal.
 */
function stored(result: { ok: unknown } | { error: string }): unknown {
  if (!("ok" in result)) return result;
  // In one key order: the store writes columns by name, not the batch's order.
  return JSON.stringify(result.ok, (_, value) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );
}

/** `value` once for each probe of each field FIELDS names, wherever the field is. */
function valueProbes(value: unknown): unknown[] {
  const out: unknown[] = [];
  const visit = (node: unknown, replace: (next: unknown) => unknown) => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        visit(item, (next) => replace(node.map((other, at) => (at === index ? next : other))));
      });
      return;
    }
    const record = node as Record<string, unknown>;
    for (const [key, child] of Object.entries(record)) {
      const probes = FIELDS[key];
      const with_ = (next: unknown) => replace({ ...record, [key]: next });
      if (probes !== undefined) {
        for (const probe of probes()) out.push(with_(probe));
        if (NULLABLE.has(key) || child === null) out.push(with_(null));
      }
      // Records from outside are probed whole, not walked.
      if (key !== "details" && key !== "arguments" && key !== "raw_usage") visit(child, with_);
    }
  };
  visit(value, (next) => next);
  return out;
}

describe("runtime records against the full check, value by value", () => {
  it("a batch: stored as zod has it, or refused with its message", () => {
    const inputs = [roundBatch(2), ...valueProbes(roundBatch(2))];
    const payload = {
      metric_key: "chat:2:1",
      turn_index: 2,
      round_index: 1,
      agent: "chat_agent",
      request_body: "{}",
      response_body: "data: [DONE]",
      request_bytes: 2,
      response_bytes: 12,
      request_truncated: false,
      response_truncated: false,
    } as const;
    inputs.push(...valueProbes({ ...roundBatch(2), payloads: [payload] }));
    expect(inputs.length).toBeGreaterThan(500);
    for (const input of inputs) {
      const vouched = outcome(() => parseAppendRecords(runtimeRecords(input as RuntimeRecords)));
      expect(stored(vouched)).toStrictEqual(
        stored(outcome(() => parseInput(AppendRecordsOptions, input, "appendRecords"))),
      );
    }
  });

  it("a claim: taken as zod has it, or refused with its message", () => {
    const claim: RuntimeClaim = {
      user_message: "and now?",
      runner: "1@host",
      is_runner_alive: () => true,
      audit: { event: "turn_start", details: { mode: "dual_agent" } },
      expected: { updated_at: "2026-12-05T06:00:00.000Z", incarnation: 3 },
    };
    const inputs = [claim, ...valueProbes(claim)];
    expect(inputs.length).toBeGreaterThan(30);
    for (const input of inputs) {
      expect(
        stored(outcome(() => parseClaimTurn(runtimeClaim(input as RuntimeClaim)))),
      ).toStrictEqual(stored(outcome(() => parseInput(ClaimTurnOptions, input, "claimTurn"))));
    }
  });
});
