import { z } from "zod";
import type { TokenUsage } from "./usage.js";

/**
 * USD per million tokens. `cached_input` defaults to `input`; `cache_write` (prompt tokens written
 * to a provider's cache, e.g. 1.25 × input at Anthropic) defaults to `input`. Reasoning tokens are
 * completion tokens and cost `output`.
 */
export const Price = z.strictObject({
  input: z.number().nonnegative(),
  cached_input: z.number().nonnegative().optional(),
  cache_write: z.number().nonnegative().optional(),
  output: z.number().nonnegative(),
});
export type Price = z.output<typeof Price>;
export const PriceTable = z.record(z.string(), Price);
export type PriceTable = z.output<typeof PriceTable>;

/**
 * What a call cost by the price table, from its tokens. Prices are USD per million tokens.
 *
 * The built-in table holds OpenAI's list prices for a few well-known models **as of this writing**
 * (standard tier, no batch discount); prices change, and other models and endpoints (a local
 * Ollama model, a fine-tune, another vendor behind an OpenAI-compatible URL) are unknown here.
 * A suite extends or overrides the table under `prices:`, keyed by model string, e.g.
 * `prices: { "openai:llama3.1": { input: 0, output: 0 } }`. An unknown model's cost is null
 * (shown as unknown), never a guess.
 */
export const DEFAULT_PRICES: Record<string, Price> = {
  // The simulated model costs nothing ("sim" and every "sim:NAME").
  sim: { input: 0, cached_input: 0, output: 0 },
  "gpt-5": { input: 1.25, cached_input: 0.125, output: 10 },
  "gpt-5-mini": { input: 0.25, cached_input: 0.025, output: 2 },
  "gpt-5-nano": { input: 0.05, cached_input: 0.005, output: 0.4 },
  "gpt-4.1": { input: 2, cached_input: 0.5, output: 8 },
  "gpt-4.1-mini": { input: 0.4, cached_input: 0.1, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, cached_input: 0.025, output: 0.4 },
  "gpt-4o": { input: 2.5, cached_input: 1.25, output: 10 },
  "gpt-4o-mini": { input: 0.15, cached_input: 0.075, output: 0.6 },
  o3: { input: 2, cached_input: 0.5, output: 8 },
  "o3-mini": { input: 1.1, cached_input: 0.55, output: 4.4 },
  "o4-mini": { input: 1.1, cached_input: 0.275, output: 4.4 },
};

/**
 * How a longer model name may continue a known one and still be that model: a dated snapshot
 * ("gpt-4.1-mini-2025-04-14", "-0613") or a version tag ("@2024-08-06"). Anything else is another
 * model: "o3-pro" costs ten times "o3", "llama3.1-70b" more than "llama3.1-8b".
 */
const SNAPSHOT = /^(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|@.+)$/;

/**
 * The price of a model string. `extra` (a suite's `prices`) wins over the built-in table. Looked
 * up in order: the exact string; the name without its provider ("openai:gpt-4.1-mini" →
 * "gpt-4.1-mini"); the longest known name it continues with a snapshot suffix (dated snapshots
 * such as "gpt-4.1-mini-2025-04-14"), and "sim:NAME" → "sim". Null when unknown: never a guess.
 */
export function priceFor(model: string, extra: Record<string, Price>): Price | null {
  // `extra` over the built-in table, looked up in both rather than merged: every recorded call
  // asks, and nearly always for an exact name.
  const known = (key: string): Price | undefined =>
    Object.hasOwn(extra, key)
      ? extra[key]
      : Object.hasOwn(DEFAULT_PRICES, key)
        ? DEFAULT_PRICES[key]
        : undefined;
  const exact = known(model);
  if (exact !== undefined) return exact;
  const separator = model.indexOf(":");
  const provider = separator === -1 ? "" : model.slice(0, separator);
  const name = separator === -1 ? model : model.slice(separator + 1);
  // The sim's own names ("sim:fast") are its variants, not a provider prefix.
  if (provider !== "sim" && name !== model) {
    const unprefixed = known(name);
    if (unprefixed !== undefined) return unprefixed;
  }
  if (provider === "sim") return known("sim") ?? null;
  const table: Record<string, Price> = { ...DEFAULT_PRICES, ...extra };
  let best: string | null = null;
  for (const key of Object.keys(table)) {
    for (const candidate of [model, name]) {
      const continues =
        candidate.length > key.length &&
        candidate.startsWith(key) &&
        SNAPSHOT.test(candidate.slice(key.length));
      if (continues && (best === null || key.length > best.length)) best = key;
    }
  }
  return best === null ? null : (table[best] ?? null);
}

/**
 * The price table's USD for one call: uncached, unwritten prompt tokens at `input`, cached ones at
 * `cached_input`, cache writes at `cache_write`, completion tokens (reasoning included) at `output`.
 * Null when the price is unknown.
 */
export function estimateCost(usage: TokenUsage, price: Price | null): number | null {
  if (price === null) return null;
  const cached = Math.min(usage.cached_tokens, usage.prompt_tokens);
  const written = Math.min(usage.cache_write_tokens, usage.prompt_tokens - cached);
  const micro =
    (usage.prompt_tokens - cached - written) * price.input +
    cached * (price.cached_input ?? price.input) +
    written * (price.cache_write ?? price.input) +
    usage.completion_tokens * price.output;
  return micro / 1_000_000;
}
