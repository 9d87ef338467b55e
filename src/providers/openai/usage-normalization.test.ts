import { describe, expect, it } from "vitest";
import { tokenUsage } from "../../domain/usage.js";
import { boundRaw, MAX_RAW_USAGE_CHARS, normalizeUsage } from "./usage-normalization.js";

/** Provider usage objects in, the lab's invariant-keeping usage out. */

describe("normalizeUsage", () => {
  it("reads OpenAI's details: reasoning inside completion, cached inside prompt", () => {
    const usage = {
      prompt_tokens: 1300,
      completion_tokens: 228,
      total_tokens: 1528,
      prompt_tokens_details: { cached_tokens: 1152 },
      completion_tokens_details: { reasoning_tokens: 192 },
    };
    expect(normalizeUsage(usage)).toEqual({
      usage: tokenUsage({
        prompt_tokens: 1300,
        completion_tokens: 228,
        total_tokens: 1528,
        cached_tokens: 1152,
        reasoning_tokens: 192,
      }),
      source: "endpoint",
      cost_usd: null,
      raw: usage,
    });
  });

  it("moves xAI's reasoning, reported beside completion but inside total, into completion", () => {
    const result = normalizeUsage({
      prompt_tokens: 32,
      completion_tokens: 9,
      total_tokens: 371,
      completion_tokens_details: { reasoning_tokens: 330 },
    });
    expect(result?.usage).toEqual(
      tokenUsage({
        prompt_tokens: 32,
        completion_tokens: 339,
        total_tokens: 371,
        reasoning_tokens: 330,
      }),
    );
  });

  it("counts a total above the parts as output the parts left out, so no cost is lost", () => {
    // Thinking a provider itemizes nowhere: generated, so billed as completion.
    const result = normalizeUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 99 });
    expect(result?.usage).toEqual(
      tokenUsage({ prompt_tokens: 10, completion_tokens: 89, total_tokens: 99 }),
    );
    expect(result?.raw.completion_tokens).toBe(5);
  });

  it("recomputes a total below its parts from the parts, keeping the reported one in raw", () => {
    const result = normalizeUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 12 });
    expect(result?.usage).toEqual(
      tokenUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }),
    );
    expect(result?.raw.total_tokens).toBe(12);
    expect(normalizeUsage({ prompt_tokens: 10, completion_tokens: 5 })?.usage.total_tokens).toBe(
      15,
    );
  });

  it("reads an implausible count (a server's unsigned −1) as absent, never as a figure to store", () => {
    // As JSON.parse reads it off the wire.
    const unsignedMinusOne = JSON.parse("18446744073709551615") as number;
    const result = normalizeUsage({
      prompt_tokens: unsignedMinusOne,
      completion_tokens: 7,
      total_tokens: unsignedMinusOne,
    });
    expect(result?.usage).toEqual(tokenUsage({ prompt_tokens: 0, completion_tokens: 7 }));
    expect(result?.raw.prompt_tokens).toBe(unsignedMinusOne);
  });

  it("caps reasoning at the completion when a provider reports more", () => {
    const result = normalizeUsage({
      prompt_tokens: 1,
      completion_tokens: 4,
      total_tokens: 5,
      completion_tokens_details: { reasoning_tokens: 50 },
    });
    expect(result?.usage).toMatchObject({ completion_tokens: 4, reasoning_tokens: 4 });
  });

  it("takes DeepSeek's cache hit as cached, and hit + miss as the prompt when it is missing", () => {
    expect(
      normalizeUsage({
        prompt_tokens: 1000,
        completion_tokens: 20,
        prompt_cache_hit_tokens: 896,
        prompt_cache_miss_tokens: 104,
      })?.usage,
    ).toEqual(
      tokenUsage({
        prompt_tokens: 1000,
        completion_tokens: 20,
        total_tokens: 1020,
        cached_tokens: 896,
      }),
    );
    expect(
      normalizeUsage({
        completion_tokens: 20,
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
      })?.usage,
    ).toEqual(
      tokenUsage({
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        cached_tokens: 64,
      }),
    );
  });

  it("prefers prompt_tokens_details.cached_tokens over DeepSeek's and llama.cpp's figures", () => {
    const result = normalizeUsage(
      {
        prompt_tokens: 100,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 10 },
        prompt_cache_hit_tokens: 20,
      },
      { cache_n: 30, prompt_n: 70 },
    );
    expect(result?.usage.cached_tokens).toBe(10);
  });

  it("takes cache writes from OpenRouter's details or Anthropic's field, and OpenRouter's cost", () => {
    const openRouter = normalizeUsage({
      prompt_tokens: 1500,
      completion_tokens: 300,
      total_tokens: 1800,
      cost: 0.00867,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 400 },
    });
    expect(openRouter?.usage).toMatchObject({ cached_tokens: 1000, cache_write_tokens: 400 });
    expect(openRouter?.cost_usd).toBe(0.00867);
    const anthropic = normalizeUsage({
      prompt_tokens: 2100,
      completion_tokens: 50,
      cache_creation_input_tokens: 2000,
      cache_read_input_tokens: 100,
    });
    expect(anthropic?.usage).toMatchObject({ cached_tokens: 100, cache_write_tokens: 2000 });
    expect(anthropic?.cost_usd).toBeNull();
  });

  it("keeps cached + cache writes within the prompt", () => {
    const result = normalizeUsage({
      prompt_tokens: 100,
      completion_tokens: 1,
      prompt_tokens_details: { cached_tokens: 80, cache_write_tokens: 50 },
    });
    expect(result?.usage).toMatchObject({
      prompt_tokens: 100,
      cached_tokens: 80,
      cache_write_tokens: 20,
    });
    expect(result?.raw.prompt_tokens_details).toEqual({
      cached_tokens: 80,
      cache_write_tokens: 50,
    });
  });

  it("fills llama.cpp's missing cached figure from timings.cache_n, and keeps timings in raw", () => {
    const timings = { cache_n: 138, prompt_n: 1, predicted_n: 14, predicted_ms: 301.2 };
    const result = normalizeUsage(
      { prompt_tokens: 139, completion_tokens: 14, total_tokens: 153 },
      timings,
    );
    expect(result?.usage).toEqual(
      tokenUsage({
        prompt_tokens: 139,
        completion_tokens: 14,
        total_tokens: 153,
        cached_tokens: 138,
      }),
    );
    expect(result?.source).toBe("endpoint");
    expect(result?.raw).toEqual({
      prompt_tokens: 139,
      completion_tokens: 14,
      total_tokens: 153,
      timings,
    });
    // cache_n never exceeds the prompt it is part of.
    expect(
      normalizeUsage({ prompt_tokens: 5, completion_tokens: 1 }, { cache_n: 50 })?.usage
        .cached_tokens,
    ).toBe(5);
  });

  it("counts from llama.cpp's timings alone when no usage came", () => {
    const timings = { cache_n: 138, prompt_n: 1, predicted_n: 12 };
    expect(normalizeUsage(null, timings)).toEqual({
      usage: tokenUsage({
        prompt_tokens: 139,
        completion_tokens: 12,
        total_tokens: 151,
        cached_tokens: 138,
      }),
      source: "provider_timings",
      cost_usd: null,
      raw: { timings },
    });
    // A usage object of nulls is no usage.
    expect(normalizeUsage({ prompt_tokens: null, completion_tokens: null }, timings)?.source).toBe(
      "provider_timings",
    );
  });

  it("says nothing when neither usage nor timings carry counts", () => {
    expect(normalizeUsage(null, null)).toBeNull();
    expect(
      normalizeUsage({ prompt_tokens: null, total_tokens: null }, { prompt_ms: 3 }),
    ).toBeNull();
  });

  it("ignores counts that are not finite non-negative numbers", () => {
    const result = normalizeUsage({
      prompt_tokens: 10,
      completion_tokens: 5,
      completion_tokens_details: { reasoning_tokens: "3" },
      prompt_tokens_details: { cached_tokens: -4 },
      cost: "0.1",
    });
    expect(result?.usage).toEqual(
      tokenUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }),
    );
    expect(result?.cost_usd).toBeNull();
  });
});

describe("boundRaw", () => {
  it("keeps a usage-sized object as it is", () => {
    const raw = { prompt_tokens: 1, details: { a: [1, 2, 3] }, note: "ok" };
    expect(boundRaw(raw)).toEqual(raw);
  });

  it("cuts a huge or deep object, and says so", () => {
    const raw: Record<string, unknown> = { prompt_tokens: 1, long: "x".repeat(100_000) };
    for (let index = 0; index < 500; index++) raw[`key_${index}`] = "y".repeat(200);
    raw.deep = { a: { b: { c: { d: { e: 1 } } } } };
    const bounded = boundRaw(raw);
    expect(bounded._truncated).toBe(true);
    expect(bounded.prompt_tokens).toBe(1);
    expect(JSON.stringify(bounded).length).toBeLessThanOrEqual(MAX_RAW_USAGE_CHARS + 64);
  });
});
