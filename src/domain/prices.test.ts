import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES, estimateCost, priceFor } from "./prices.js";
import { tokenUsage } from "./usage.js";

describe("priceFor", () => {
  it("finds exact names, names behind a provider, and dated snapshots", () => {
    expect(priceFor("gpt-4.1-mini", {})).toEqual(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("openai:gpt-4.1-mini", {})).toEqual(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("openai:gpt-4.1-mini-2025-04-14", {})).toEqual(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("openai:gpt-4.1-2025-04-14", {})).toEqual(DEFAULT_PRICES["gpt-4.1"]);
    expect(priceFor("openai:gpt-4o-mini", {})).toEqual(DEFAULT_PRICES["gpt-4o-mini"]);
    expect(priceFor("openai:o3-mini", {})).toEqual(DEFAULT_PRICES["o3-mini"]);
  });

  it("prices every simulated model at zero", () => {
    const free = { input: 0, cached_input: 0, output: 0 };
    expect(priceFor("sim", {})).toEqual(free);
    expect(priceFor("sim:fast", {})).toEqual(free);
  });

  it("is null for unknown models, and never matches a mere prefix", () => {
    expect(priceFor("openai:llama3.1", {})).toBeNull();
    expect(priceFor("openai:gpt-4.10", {})).toBeNull();
    expect(priceFor("simulator", {})).toBeNull();
    // Another model of the same family is not priced as its cheaper namesake.
    expect(priceFor("openai:o3-pro", {})).toBeNull();
    expect(priceFor("openai:gpt-5-pro", {})).toBeNull();
    expect(priceFor("openai:gpt-4.1-mini-high", {})).toBeNull();
    expect(priceFor("openai:gpt-4o-2024-08-06", {})).toEqual(DEFAULT_PRICES["gpt-4o"]);
    expect(priceFor("openai:gpt-4-0613", { "gpt-4": { input: 30, output: 60 } })).toEqual({
      input: 30,
      output: 60,
    });
  });

  it("lets a suite's prices extend and override the table", () => {
    const local = { input: 0, output: 0 };
    const cheaper = { input: 0.1, output: 0.2 };
    const extra = { "openai:llama3.1": local, "gpt-4.1-mini": cheaper };
    expect(priceFor("openai:llama3.1", extra)).toEqual(local);
    // A longer name is another model unless it is a dated snapshot.
    expect(priceFor("openai:llama3.1-8b", extra)).toBeNull();
    expect(priceFor("openai:gpt-4.1-mini", extra)).toEqual(cheaper);
    expect(priceFor("gpt-4.1", extra)).toEqual(DEFAULT_PRICES["gpt-4.1"]);
  });
});

describe("estimateCost", () => {
  const calls = [
    tokenUsage({ prompt_tokens: 1_000_000, cached_tokens: 400_000, completion_tokens: 100_000 }),
    tokenUsage({ prompt_tokens: 500_000, cached_tokens: 0, completion_tokens: 50_000 }),
  ];
  const sum = (price: Parameters<typeof estimateCost>[1]) =>
    calls.reduce<number | null>((total, usage) => {
      const cost = estimateCost(usage, price);
      return total === null || cost === null ? null : total + cost;
    }, 0);

  it("prices uncached, cached and completion tokens per million", () => {
    // (1.1M uncached × 0.4) + (0.4M cached × 0.1) + (0.15M completion × 1.6)
    expect(sum({ input: 0.4, cached_input: 0.1, output: 1.6 })).toBeCloseTo(0.44 + 0.04 + 0.24, 12);
  });

  it("charges cached tokens as input when the price has no cached rate", () => {
    expect(sum({ input: 1, output: 2 })).toBeCloseTo(1.5 + 0.3, 12);
  });

  it("is zero for free models and null for unknown prices", () => {
    expect(sum(priceFor("sim", {}))).toBe(0);
    expect(sum(null)).toBeNull();
  });

  it("prices cache writes at their own rate (input without one) and reasoning as output", () => {
    const usage = tokenUsage({
      prompt_tokens: 1_000_000,
      cached_tokens: 200_000,
      cache_write_tokens: 300_000,
      completion_tokens: 100_000,
      reasoning_tokens: 80_000,
    });
    // 0.5M plain × 2 + 0.2M cached × 0.5 + 0.3M written × 2.5 + 0.1M completion × 8
    expect(
      estimateCost(usage, { input: 2, cached_input: 0.5, cache_write: 2.5, output: 8 }),
    ).toBeCloseTo(1 + 0.1 + 0.75 + 0.8, 12);
    expect(estimateCost(usage, { input: 2, output: 8 })).toBeCloseTo(2 + 0.8, 12);
  });
});
