import { describe, expect, it, vi } from "vitest";
import { deep, mutations, outcome } from "../../test/store/probes.js";
import { parseInput } from "../domain/validation.js";
import { parseAppendAudit, parseAppendRecords, parseClaimTurn } from "./fast-inputs.js";
import { AppendAuditOptions, AppendRecordsOptions, ClaimTurnOptions } from "./store-inputs.js";

const AUDIT = {
  event: "tool_end",
  details: { event_id: "call_1", ok: true, latency_ms: 0.12, usage: { prompt_tokens: 3 } },
  turn_index: 2,
  round_index: 1,
};

/** A model call's row, every metadata field given, and an assistant message with a tool call. */
const CALL_ROUND = {
  message_groups: [
    {
      turn_index: 1,
      messages: [
        {
          role: "assistant",
          content: "Let me look.",
          reasoning: "think",
          refusal: "",
          tool_calls: [
            {
              id: "c1",
              name: "mock_search",
              arguments: { query: "q" },
              raw_arguments: '{"query":"q"}',
            },
          ],
        },
        { role: "tool", content: "{}", name: "mock_search", tool_call_id: "c1", tool_calls: [] },
      ],
    },
  ],
  usage: [
    {
      turn_index: 1,
      round_index: 1,
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        cached_tokens: 4,
        reasoning_tokens: 2,
        cache_write_tokens: 1,
      },
      ttft_ms: 0.3,
      elapsed_ms: 0.5,
      metadata: {
        agent: "chat_agent",
        call_kind: "chat_completion",
        event_id: null,
        event_name: "x",
        used_fallback: false,
        tool_latency_ms: null,
        metric_key: "chat:1:1",
        estimated: true,
        usage_source: "endpoint",
        cost_usd: 0.01,
        cost_estimated_usd: 0,
        response_model: "sim",
        response_id: "r",
        system_fingerprint: null,
        finish_reason: "tool_calls",
        refusal: false,
        raw_usage: { total_tokens: 15 },
      },
    },
  ],
  // A middle round leaves updated_at to the turn's end, as the runtime writes it.
  touch_session: false,
};

const RECORDS = {
  message_groups: [
    {
      turn_index: 2,
      messages: [
        { role: "assistant", content: "", tool_calls: [] },
        { role: "tool", content: "{}", name: "mock_search", tool_call_id: "call_1" },
      ],
    },
  ],
  usage: [
    {
      turn_index: 2,
      round_index: 1,
      usage: {},
      elapsed_ms: 0.1,
      metadata: { agent: "event_kernel", call_kind: "tool_execution", metric_key: "tool:2:1:c" },
    },
  ],
  audit: [AUDIT, { event: "turn_end", details: { status: "completed" }, turn_index: 2 }],
  complete_turn: { turn_index: 2, wall_time_ms: 3.5, status: "completed" },
  payloads: [],
  rollup_turn: 2,
};

/** A claim as the runtime makes it: a runner check, and the turn_start row. */
const CLAIM = {
  user_message: "search for it",
  runner: "1@host",
  is_runner_alive: () => true,
  audit: { event: "turn_start", details: { mode: "dual_agent", tools: ["mock_search"] } },
  expected: { updated_at: "2026-12-04T10:00:00.000Z", incarnation: 7 },
};

describe("the store's fast input checks", () => {
  it("give what zod gives for an audit entry and every mutation of it: the output, or its refusal", () => {
    for (const input of [AUDIT, ...mutations(AUDIT)]) {
      expect(outcome(() => parseAppendAudit(input, "appendAudit"))).toStrictEqual(
        outcome(() => parseInput(AppendAuditOptions, input, "appendAudit")),
      );
    }
  });

  it("give what zod gives for a round's batch and every mutation of it", () => {
    const inputs = [
      RECORDS,
      CALL_ROUND,
      { audit: [AUDIT] },
      {},
      ...mutations(RECORDS),
      ...mutations(CALL_ROUND),
    ];
    expect(inputs.length).toBeGreaterThan(2_000);
    for (const input of inputs) {
      expect(outcome(() => parseAppendRecords(input))).toStrictEqual(
        outcome(() => parseInput(AppendRecordsOptions, input, "appendRecords")),
      );
    }
  });

  it("read an object with symbol or hidden keys as zod does, at every level of a batch", () => {
    const inputs = [RECORDS, CALL_ROUND].flatMap(oddKeyVariants);
    // Three variants per object (23) and one per key.
    expect(inputs.length).toBeGreaterThan(100);
    for (const input of inputs) {
      expect(outcome(() => parseAppendRecords(input))).toStrictEqual(
        outcome(() => parseInput(AppendRecordsOptions, input, "appendRecords")),
      );
    }
  });

  it("give what zod gives for a turn's claim and every mutation of it", () => {
    const { is_runner_alive: _alive, audit: _audit, expected: _expected, ...bare } = CLAIM;
    for (const input of [CLAIM, bare, ...mutations(CLAIM)]) {
      expect(outcome(() => parseClaimTurn(input))).toStrictEqual(
        outcome(() => parseInput(ClaimTurnOptions, input, "claimTurn")),
      );
    }
  });

  it("take the batches and claims the runtime writes without asking zod", () => {
    const zod = vi.spyOn(AppendRecordsOptions, "safeParse");
    const claim = vi.spyOn(ClaimTurnOptions, "safeParse");
    try {
      for (const input of [RECORDS, CALL_ROUND]) {
        expect(parseAppendRecords(input)).toStrictEqual(AppendRecordsOptions.parse(input));
      }
      expect(parseClaimTurn(CLAIM)).toStrictEqual(ClaimTurnOptions.parse(CLAIM));
      expect(zod).not.toHaveBeenCalled();
      expect(claim).not.toHaveBeenCalled();
    } finally {
      zod.mockRestore();
      claim.mockRestore();
    }
  });

  it("refuse with zod's message naming the entry and the field", () => {
    expect(() => parseAppendRecords({ audit: [AUDIT, { ...AUDIT, details: deep(65) }] })).toThrow(
      /^appendRecords: audit\.1\.details\.inner\.inner: nested deeper than 64 levels/,
    );
    expect(() => parseAppendAudit({ ...AUDIT, event: "" }, "appendAudit")).toThrow(
      /^appendAudit: event: /,
    );
  });
});

/**
 * `value` once per object in it and per odd key: a symbol key added, a key no for-in sees added,
 * and each of its own keys made one no for-in sees (its value kept).
 */
function oddKeyVariants(value: unknown): unknown[] {
  const paths: (string | number)[][] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (node === null || typeof node !== "object") return;
    if (!Array.isArray(node)) paths.push(path);
    for (const [key, child] of Object.entries(node)) {
      walk(child, [...path, Array.isArray(node) ? Number(key) : key]);
    }
  };
  walk(value, []);
  const at = (root: unknown, path: (string | number)[]) =>
    path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);
  return paths.flatMap((path) => {
    const keys = Object.keys(at(value, path) as Record<string, unknown>);
    const edits: ((target: Record<string, unknown>) => void)[] = [
      (target) => {
        target[Symbol("odd") as unknown as string] = 1;
      },
      (target) => Object.defineProperty(target, "hidden", { value: 1, enumerable: false }),
      // zod's plain-object test reads an own function `constructor` as a class's, and refuses it.
      (target) => {
        target.constructor = () => 1;
      },
      ...keys.map((key) => (target: Record<string, unknown>) => {
        Object.defineProperty(target, key, { value: target[key], enumerable: false });
      }),
    ];
    return edits.map((edit) => {
      const copy = structuredClone(value);
      edit(at(copy, path) as Record<string, unknown>);
      return copy;
    });
  });
}
