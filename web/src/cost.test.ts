import { describe, expect, it } from "vitest";
import type { UsageRollup } from "./api-types.js";
import { callCostLabel, experimentCostLabel, formatCost, rollupCostLabel } from "./cost.js";

function rollup(fields: Partial<UsageRollup>): UsageRollup {
  return {
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    cache_write_tokens: 0,
    elapsed_ms: 0,
    call_count: 0,
    fallback_count: 0,
    tool_count: 0,
    estimated_count: 0,
    cost_usd: null,
    reported_cost_count: 0,
    unpriced_count: 0,
    turn_wall_time_ms: null,
    ...fields,
  };
}

describe("formatCost", () => {
  it("shows cheap calls to four decimals, whole dollars to cents, and says when unknown", () => {
    expect(formatCost(null)).toBe("—");
    expect(formatCost(undefined)).toBe("—");
    expect(formatCost(Number.NaN)).toBe("—");
    expect(formatCost(0)).toBe("$0");
    expect(formatCost(0.00004)).toBe("<$0.0001");
    expect(formatCost(0.0001)).toBe("$0.0001");
    expect(formatCost(0.0123)).toBe("$0.0123");
    expect(formatCost(0.00123)).toBe("$0.0012");
    expect(formatCost(0.012)).toBe("$0.012");
    expect(formatCost(0.5)).toBe("$0.50");
    expect(formatCost(0.99999)).toBe("$1.00");
    expect(formatCost(1.234)).toBe("$1.23");
    expect(formatCost(1234.5)).toBe("$1234.50");
    expect(formatCost(-0.5)).toBe("−$0.50");
    expect(formatCost(-0.00001)).toBe("−<$0.0001");
  });
});

describe("callCostLabel", () => {
  it("prefers the provider's reported cost over the price table's", () => {
    const label = callCostLabel({
      call_kind: "chat_completion",
      cost_usd: 0.0021,
      cost_estimated_usd: 0.0019,
    });
    expect(label).toMatchObject({ usd: 0.0021, amount: "$0.0021", source: "reported" });
    expect(label.text).toBe("reported");
    expect(label.title).toMatch(/provider/);
  });

  it("falls back to the price table, and says when neither is known", () => {
    expect(
      callCostLabel({ call_kind: "argument_fallback", cost_usd: null, cost_estimated_usd: 0 }),
    ).toMatchObject({ usd: 0, amount: "$0", source: "estimated", text: "estimated" });
    const unknown = callCostLabel({
      call_kind: "chat_completion",
      cost_usd: null,
      cost_estimated_usd: null,
    });
    expect(unknown).toMatchObject({ usd: null, amount: "—", source: "unknown", text: "unpriced" });
    expect(unknown.title).toMatch(/price table/);
  });

  it("gives a tool execution no cost and no label", () => {
    expect(
      callCostLabel({ call_kind: "tool_execution", cost_usd: null, cost_estimated_usd: null }),
    ).toMatchObject({ source: "none", text: "", amount: "—" });
  });
});

describe("rollupCostLabel", () => {
  it("says estimated when every priced model call came from the price table", () => {
    const label = rollupCostLabel(rollup({ call_count: 3, tool_count: 1, cost_usd: 0 }));
    expect(label).toMatchObject({ amount: "$0", source: "estimated", text: "estimated" });
    expect(label.title).toBe("2 calls estimated with the price table.");
  });

  it("says reported when the provider priced every model call", () => {
    const label = rollupCostLabel(
      rollup({ call_count: 2, cost_usd: 0.0042, reported_cost_count: 2 }),
    );
    expect(label).toMatchObject({ source: "reported", text: "reported", amount: "$0.0042" });
    expect(label.title).toBe("2 calls reported by the provider.");
  });

  it("says mixed when some calls were reported and others estimated", () => {
    const label = rollupCostLabel(
      rollup({ call_count: 4, tool_count: 1, cost_usd: 0.01, reported_cost_count: 1 }),
    );
    expect(label.source).toBe("mixed");
    expect(label.title).toBe(
      "1 call reported by the provider; 2 calls estimated with the price table.",
    );
  });

  it("marks a sum that leaves some model calls unpriced", () => {
    const label = rollupCostLabel(
      rollup({ call_count: 3, cost_usd: 0.002, reported_cost_count: 1, unpriced_count: 1 }),
    );
    expect(label.text).toBe("mixed · partly unpriced");
    expect(label.title).toMatch(/1 call with no known price \(not counted\)\.$/);
    expect(
      rollupCostLabel(rollup({ call_count: 2, cost_usd: 0.002, unpriced_count: 1 })).text,
    ).toBe("estimated · partly unpriced");
  });

  it("is unknown when no model call has a cost, and says nothing without model calls", () => {
    expect(rollupCostLabel(rollup({ call_count: 2, unpriced_count: 2 }))).toMatchObject({
      amount: "—",
      source: "unknown",
      text: "unpriced",
    });
    expect(rollupCostLabel(rollup({ call_count: 1, tool_count: 1 }))).toMatchObject({
      source: "none",
      text: "",
    });
  });
});

describe("experimentCostLabel", () => {
  it("labels a report's cost with the source the report gives it", () => {
    expect(experimentCostLabel(0.002, "estimated", 4)).toMatchObject({
      amount: "$0.002",
      source: "estimated",
      text: "estimated",
    });
    expect(experimentCostLabel(0.002, "reported", 4)).toMatchObject({ text: "reported" });
    expect(experimentCostLabel(0.002, "mixed", 4).title).toMatch(/^Mixed/);
    expect(experimentCostLabel(null, "unknown", 4)).toMatchObject({
      amount: "—",
      source: "unknown",
    });
    expect(experimentCostLabel(null, "estimated", 0)).toMatchObject({
      amount: "—",
      source: "none",
    });
  });
});
