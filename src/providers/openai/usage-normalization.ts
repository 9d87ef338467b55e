import { type TokenUsage, tokenUsage, type UsageSource } from "../../domain/usage.js";

/**
 * A provider's usage report in the lab's shape. Providers agree on `prompt_tokens`,
 * `completion_tokens` and `total_tokens` and on little else; each figure below is read from the
 * first place a provider we know puts it (see DESIGN.md, "Provider truth"). The result always
 * holds the lab's invariant — prompt + completion = total, reasoning ≤ completion,
 * cached + cache writes ≤ prompt — and `raw` keeps what was received, so a normalization can be
 * checked against the provider's own numbers.
 */

export interface NormalizedUsage {
  usage: TokenUsage;
  source: Exclude<UsageSource, "estimated">;
  /** The provider's price for the call (OpenRouter's `usage.cost`), in USD. */
  cost_usd: number | null;
  /** The usage object as received, plus llama.cpp's `timings` under `timings`; bounded in size. */
  raw: Record<string, unknown>;
}

type Fields = Record<string, unknown>;

/**
 * Beyond any real call (a trillion tokens): a larger figure is a server's bug, such as an
 * unsigned −1 (18446744073709551615), and is read as absent rather than stored.
 */
const MAX_PLAUSIBLE_COUNT = 1e12;

/** A count as a provider may send it: a plausible non-negative number, rounded; else absent. */
function count(value: unknown): number | null {
  return typeof value === "number" && value >= 0 && value <= MAX_PLAUSIBLE_COUNT
    ? Math.round(value)
    : null;
}

function fields(value: unknown): Fields | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Fields)
    : null;
}

/** Whether a usage object carries any token count at all (some servers send one full of nulls). */
export function hasUsageCounts(usage: Fields): boolean {
  return (
    count(usage.prompt_tokens) !== null ||
    count(usage.completion_tokens) !== null ||
    count(usage.prompt_cache_hit_tokens) !== null ||
    count(usage.prompt_cache_miss_tokens) !== null
  );
}

/** Whether llama.cpp's `timings` carries counts the lab can use when no usage came. */
export function hasTimingCounts(timings: Fields): boolean {
  return count(timings.prompt_n) !== null || count(timings.predicted_n) !== null;
}

/**
 * The call's usage from the last usage object (null when none carried counts) and the last
 * `timings` object; null when neither says anything, and the caller estimates.
 */
export function normalizeUsage(
  usage: Fields | null,
  timings: Fields | null = null,
): NormalizedUsage | null {
  if (usage !== null && hasUsageCounts(usage)) return fromUsage(usage, timings);
  if (timings !== null && hasTimingCounts(timings)) return fromTimings(timings);
  return null;
}

function fromUsage(usage: Fields, timings: Fields | null): NormalizedUsage {
  const promptDetails = fields(usage.prompt_tokens_details);
  const completionDetails = fields(usage.completion_tokens_details);
  const hit = count(usage.prompt_cache_hit_tokens);
  const miss = count(usage.prompt_cache_miss_tokens);
  // DeepSeek's hit + miss is the whole prompt, should prompt_tokens be missing.
  const prompt =
    count(usage.prompt_tokens) ?? (hit !== null || miss !== null ? (hit ?? 0) + (miss ?? 0) : 0);
  let completion = count(usage.completion_tokens) ?? 0;
  const reasoning = count(completionDetails?.reasoning_tokens) ?? 0;
  const reportedTotal = count(usage.total_tokens);
  // A total above the parts counts tokens the parts leave out: xAI's reasoning (reported beside
  // completion_tokens, inside total_tokens), or thinking a provider itemizes nowhere. They are
  // generated, so billed as output: completion takes the gap, and the cost is not under-counted.
  if (reportedTotal !== null && reportedTotal > prompt + completion) {
    completion = reportedTotal - prompt;
  }
  const cacheN = count(timings?.cache_n);
  const cached = Math.min(
    prompt,
    count(promptDetails?.cached_tokens) ??
      hit ??
      count(usage.cache_read_input_tokens) ??
      (cacheN !== null ? Math.min(cacheN, prompt) : 0),
  );
  const cacheWrite = Math.min(
    prompt - cached,
    count(promptDetails?.cache_write_tokens) ?? count(usage.cache_creation_input_tokens) ?? 0,
  );
  return {
    // A total below the parts is the total's error: the parts win, the raw object keeps it.
    usage: tokenUsage({
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      cached_tokens: cached,
      reasoning_tokens: Math.min(reasoning, completion),
      cache_write_tokens: cacheWrite,
    }),
    source: "endpoint",
    cost_usd: cost(usage.cost),
    raw: boundRaw(timings === null ? usage : { ...usage, timings }),
  };
}

/** llama.cpp without usage: `prompt_n` is what it evaluated, `cache_n` what it reused. */
function fromTimings(timings: Fields): NormalizedUsage {
  const cacheN = count(timings.cache_n) ?? 0;
  const prompt = cacheN + (count(timings.prompt_n) ?? 0);
  return {
    usage: tokenUsage({
      prompt_tokens: prompt,
      completion_tokens: count(timings.predicted_n) ?? 0,
      cached_tokens: cacheN,
    }),
    source: "provider_timings",
    cost_usd: null,
    raw: boundRaw({ timings }),
  };
}

function cost(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

// ---- bounding the raw object --------------------------------------------------------------------

/** A usage object is a few hundred bytes; anything much larger is not one we should keep whole. */
export const MAX_RAW_USAGE_CHARS = 8_192;
const MAX_RAW_DEPTH = 4;
const MAX_RAW_KEYS = 64;
const MAX_RAW_ITEMS = 32;
const MAX_RAW_STRING = 256;

/**
 * The raw object, kept as received when it is small; otherwise cut (deep nesting, long strings,
 * many keys) and marked `_truncated`, so a reader knows it is not the whole report.
 */
export function boundRaw(raw: Fields): Fields {
  const state = { cut: false };
  const bounded = boundValue(raw, 0, state) as Fields;
  let size = JSON.stringify(bounded).length;
  if (!state.cut && size <= MAX_RAW_USAGE_CHARS) return bounded;
  const result: Fields = { _truncated: true };
  size = 20;
  for (const [key, value] of Object.entries(bounded)) {
    const entry = JSON.stringify(value) ?? "null";
    if (size + key.length + entry.length + 4 > MAX_RAW_USAGE_CHARS) continue;
    result[key] = value;
    size += key.length + entry.length + 4;
  }
  return result;
}

function boundValue(value: unknown, depth: number, state: { cut: boolean }): unknown {
  if (typeof value === "string") {
    if (value.length <= MAX_RAW_STRING) return value;
    state.cut = true;
    return `${value.slice(0, MAX_RAW_STRING)}…`;
  }
  if (typeof value !== "object" || value === null) {
    return typeof value === "number" && !Number.isFinite(value) ? null : value;
  }
  if (depth >= MAX_RAW_DEPTH) {
    state.cut = true;
    return null;
  }
  if (Array.isArray(value)) {
    if (value.length > MAX_RAW_ITEMS) state.cut = true;
    return value.slice(0, MAX_RAW_ITEMS).map((item) => boundValue(item, depth + 1, state));
  }
  const result: Fields = {};
  let keys = 0;
  for (const [key, item] of Object.entries(value)) {
    if (++keys > MAX_RAW_KEYS) {
      state.cut = true;
      break;
    }
    result[key.slice(0, MAX_RAW_STRING)] = boundValue(item, depth + 1, state);
  }
  return result;
}
