import { findTooDeep, MAX_CONFIG_DEPTH, toWellFormed } from "../domain/json-limits.js";
import { redactSecrets } from "../domain/secrets.js";

/**
 * A provider's usage object is a few hundred bytes (llama.cpp's `timings` included). Anything far
 * bigger is not usage but a misbehaving endpoint, and one call's audit copy must not bloat the
 * database or fail the call that carried it.
 */
export const MAX_RAW_USAGE_BYTES = 16 * 1024;

/**
 * The JSON text a store keeps for a call's raw usage object, or null when there is none. Like
 * audit details it comes from an endpoint, so it is repaired (lone surrogates) and redacted, never
 * refused: an object nested too deep or too large is replaced by a marker that says what it was.
 */
export function storableRawUsage(raw: Record<string, unknown> | null): string | null {
  if (raw === null) return null;
  // Checked without recursion first: the walks below recurse.
  if (findTooDeep(raw, MAX_CONFIG_DEPTH) !== null) {
    return JSON.stringify(omitted(`nested deeper than ${MAX_CONFIG_DEPTH} levels`));
  }
  const text = JSON.stringify(redactSecrets(toWellFormed(raw)));
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_RAW_USAGE_BYTES) {
    return JSON.stringify(omitted(`${bytes} bytes, over the ${MAX_RAW_USAGE_BYTES}-byte cap`));
  }
  return text;
}

function omitted(reason: string): Record<string, unknown> {
  return { omitted: `raw usage not kept: ${reason}` };
}
