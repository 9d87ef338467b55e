import { describe, expect, it } from "vitest";
import type { UsageCallRecord } from "../domain/usage.js";
import { callsCost, sumCosts } from "./run-cost.js";

function call(overrides: Partial<UsageCallRecord> = {}): UsageCallRecord {
  return {
    id: 1,
    turn_index: 1,
    round_index: 1,
    prompt_tokens: 1_000_000,
    completion_tokens: 1_000_000,
    total_tokens: 2_000_000,
    cached_tokens: 0,
    ttft_ms: 10,
    elapsed_ms: 20,
    mode: "dual_agent",
    agent: "chat_agent",
    call_kind: "chat_completion",
    event_id: null,
    event_name: null,
    used_fallback: false,
    tool_latency_ms: null,
    metric_key: "chat:1:1",
    estimated: false,
    reasoning_tokens: 0,
    cache_write_tokens: 0,
    usage_source: "endpoint",
    cost_usd: null,
    cost_estimated_usd: null,
    response_model: null,
    response_id: null,
    system_fingerprint: null,
    finish_reason: "stop",
    refusal: false,
    raw_usage: null,
    created_at: "2025-01-01T00:00:00.000Z",
    ...overrides,
  };
}

const config = { chat_agent: { model: "openai:gpt-4.1" }, event_agent: { model: "openai:small" } };
const prices = { "openai:small": { input: 1, output: 1 } };

describe("callsCost", () => {
  it("takes the provider's reported cost over the recorded estimate", () => {
    expect(callsCost([call({ cost_usd: 0.5, cost_estimated_usd: 9 })], config, prices)).toEqual({
      cost_usd: 0.5,
      cost_source: "reported",
    });
  });

  it("sums recorded estimates and reported costs as mixed; tool executions are free", () => {
    const figure = callsCost(
      [
        call({ cost_usd: 0.5 }),
        call({ id: 2, metric_key: "chat:1:2", cost_estimated_usd: 0.25 }),
        call({
          id: 3,
          call_kind: "tool_execution",
          agent: "event_kernel",
          metric_key: "tool:1:1:e",
        }),
      ],
      config,
      prices,
    );
    expect(figure).toEqual({ cost_usd: 0.75, cost_source: "mixed" });
  });

  it("prices a call recorded without costs by the table, at its own agent's model", () => {
    // gpt-4.1 lists at $2 in / $8 out per million; the fallback's model at $1 / $1 from the suite.
    const figure = callsCost(
      [
        call(),
        call({
          id: 2,
          agent: "event_agent",
          call_kind: "argument_fallback",
          metric_key: "fallback:1:1:e",
        }),
      ],
      config,
      prices,
    );
    expect(figure.cost_source).toBe("estimated");
    expect(figure.cost_usd).toBeCloseTo(10 + 2, 9);
  });

  it("prices the event kernel's calls at the event agent's model, which follows the chat agent when absent", () => {
    const kernel = call({ agent: "event_kernel", metric_key: "kernel:1:1" });
    expect(callsCost([kernel], config, prices)).toEqual({ cost_usd: 2, cost_source: "estimated" });
    // No event agent: the kernel's calls went to the chat agent's gpt-4.1, as a session runs it.
    const figure = callsCost([kernel], { chat_agent: config.chat_agent }, prices);
    expect(figure.cost_usd).toBeCloseTo(10, 9);
  });

  it("is unknown when a model call has no price at all", () => {
    expect(
      callsCost([call({ cost_usd: 0.5 }), call({ agent: "event_agent" })], config, {}),
    ).toEqual({ cost_usd: null, cost_source: "unknown" });
  });

  it("costs nothing, by the table, without model calls", () => {
    expect(callsCost([], config, prices)).toEqual({ cost_usd: 0, cost_source: "estimated" });
  });
});

describe("sumCosts", () => {
  it("keeps one source when all agree and says mixed or unknown otherwise", () => {
    const reported = { cost_usd: 1, cost_source: "reported" as const };
    const estimated = { cost_usd: 2, cost_source: "estimated" as const };
    expect(sumCosts([reported, reported])).toEqual({ cost_usd: 2, cost_source: "reported" });
    expect(sumCosts([reported, estimated])).toEqual({ cost_usd: 3, cost_source: "mixed" });
    expect(sumCosts([reported, { cost_usd: null, cost_source: "unknown" }])).toEqual({
      cost_usd: null,
      cost_source: "unknown",
    });
  });
});
