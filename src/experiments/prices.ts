import type { TurnFacts } from "../domain/experiment.js";
import type { Price } from "../domain/prices.js";

export { DEFAULT_PRICES, priceFor } from "../domain/prices.js";

/**
 * USD for the turns' tokens at `chatPrice`: uncached prompt tokens at `input`, cached ones at
 * `cached_input` (or `input` when the price has none), completion tokens at `output`. The turns'
 * token counts include argument-fallback calls, which are priced at the chat model's price too.
 * Null when the price is unknown.
 */
export function costOf(turns: TurnFacts[], chatPrice: Price | null): number | null {
  if (chatPrice === null) return null;
  const cachedRate = chatPrice.cached_input ?? chatPrice.input;
  let micro = 0;
  for (const turn of turns) {
    const cached = Math.min(turn.cached_tokens, turn.prompt_tokens);
    micro +=
      (turn.prompt_tokens - cached) * chatPrice.input +
      cached * cachedRate +
      turn.completion_tokens * chatPrice.output;
  }
  return micro / 1_000_000;
}
