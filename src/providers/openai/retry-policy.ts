/**
 * When and how long to wait before trying a request again, after openai-node's client: retry
 * connection failures, 408, 409, 429 and 5xx unless the server says otherwise with
 * `x-should-retry`; wait what `retry-after-ms` or `retry-after` asks (up to a minute), else an
 * exponential backoff with jitter. Pure functions; the adapter decides that a stream which has
 * begun is never retried.
 */

export interface BackoffSettings {
  /** Delay before the first retry, before jitter (openai-node: 0.5 s). */
  base_delay_ms: number;
  /** Largest computed delay (openai-node: 8 s). */
  max_delay_ms: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { base_delay_ms: 500, max_delay_ms: 8_000 };

/** The longest server-requested wait we honour; longer requests are cut to this. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Whether a failed HTTP response may be retried, before counting the retries left. */
export function isRetryableResponse(status: number, headers: Headers): boolean {
  // Not a standard header, but OpenAI sends it, and the server knows best.
  return (
    shouldRetryVerdict(headers) ??
    (status === 408 || status === 409 || status === 429 || status >= 500)
  );
}

/** The server's `x-should-retry` ("true" or "false"), or null when it said neither. */
export function shouldRetryVerdict(headers: Headers): boolean | null {
  const verdict = headers.get("x-should-retry");
  return verdict === "true" ? true : verdict === "false" ? false : null;
}

/**
 * The wait the server asked for, in ms, or null if it asked for none (or something unreadable).
 * `retry-after-ms` wins over `retry-after`, which is seconds or an HTTP date. Cut to what this
 * adapter will wait (MAX_RETRY_AFTER_MS).
 */
export function requestedRetryDelayMs(headers: Headers, nowMs: number = Date.now()): number | null {
  const asked = askedRetryDelayMs(headers, nowMs);
  return asked === null ? null : Math.min(asked, MAX_RETRY_AFTER_MS);
}

/**
 * The wait the server asked for, in whole ms, as long as it is (a date in the past is now): what a
 * gateway hands on to a client, whose own backoff decides how long it waits.
 */
export function askedRetryDelayMs(headers: Headers, nowMs: number = Date.now()): number | null {
  const milliseconds = parseNumber(headers.get("retry-after-ms"));
  if (milliseconds !== null) return atLeastZero(milliseconds);
  const retryAfter = headers.get("retry-after");
  if (retryAfter === null || retryAfter.trim() === "") return null;
  const seconds = parseNumber(retryAfter);
  if (seconds !== null) return atLeastZero(seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? null : atLeastZero(date - nowMs);
}

/**
 * Exponential backoff for the retry numbered `retryIndex` (0 for the first), with up to 25% of
 * jitter taken off so clients that failed together do not come back together.
 */
export function backoffDelayMs(
  retryIndex: number,
  settings: BackoffSettings = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const delay = Math.min(settings.base_delay_ms * 2 ** retryIndex, settings.max_delay_ms);
  return Math.round(delay * (1 - random() * 0.25));
}

/** The delay before retry `retryIndex`: what the server asked for, else the backoff. */
export function retryDelayMs(
  retryIndex: number,
  headers: Headers | null,
  settings: BackoffSettings = DEFAULT_BACKOFF,
  random: () => number = Math.random,
  nowMs: number = Date.now(),
): number {
  const requested = headers ? requestedRetryDelayMs(headers, nowMs) : null;
  return requested ?? backoffDelayMs(retryIndex, settings, random);
}

function parseNumber(text: string | null): number | null {
  if (text === null) return null;
  const trimmed = text.trim();
  // Number("") is 0 and parseFloat("1abc") is 1; neither is a delay the server meant.
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return null;
  return Number(trimmed);
}

/** A date in the past means "now". */
function atLeastZero(milliseconds: number): number {
  return Math.round(Math.max(milliseconds, 0));
}

/** The one retry of a refused connection waits at most this: a local server restarting. */
export const REFUSED_RETRY_DELAY_MS = 250;

/**
 * The retries a connection failure may have, within `maxRetries`: none for a name that does not
 * resolve (it will not a second later), one quick one for a refused connection (a local server
 * restarting is back at once, or not soon), the full count for the rest (resets, timeouts).
 */
export function connectionRetryLimit(
  kind: "refused" | "no_such_host" | "other",
  maxRetries: number,
): number {
  if (kind === "no_such_host") return 0;
  if (kind === "refused") return Math.min(maxRetries, 1);
  return maxRetries;
}
