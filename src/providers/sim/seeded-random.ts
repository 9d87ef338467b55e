import { createHash } from "node:crypto";

/**
 * Small, dependency-free determinism helpers for the simulated model: a 32-bit string hash and a
 * seeded pseudo-random generator. Not cryptographic; only reproducible.
 */

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function hashString(text: string, salt = 0): number {
  return continueHash(fnvStart(salt), text);
}

/** FNV-1a's state before any text, for `salt`. */
export function fnvStart(salt: number): number {
  return (0x811c9dc5 ^ salt) >>> 0;
}

/** FNV-1a from the state `hash` on over `text`: `hashString(a + b)` is `continueHash(hashString(a), b)`. */
export function continueHash(hash: number, text: string): number {
  let state = hash;
  for (let index = 0; index < text.length; index++) {
    state ^= text.charCodeAt(index);
    state = Math.imul(state, 0x01000193) >>> 0;
  }
  return state;
}

/** Past this length `digest` first hashes natively: a JS loop over a huge request blocks. */
export const NATIVE_PREHASH_CHARS = 65_536;

/** The salts of `digest`'s two hashes. */
export const HIGH_SALT = 0x5bd1e995;
export const LOW_SALT = 0x27d4eb2f;

/**
 * A 16-hex-digit digest of `text` (two salted FNV-1a hashes), for ids and cache keys. A text past
 * 64 Ki characters is digested through its SHA-256 (still deterministic; shorter texts keep the
 * digests, and so the replies, they always had).
 */
export function digest(text: string): string {
  if (text.length > NATIVE_PREHASH_CHARS) {
    return digestOfSha256(createHash("sha256").update(text, "utf8").digest("hex"));
  }
  return digestOf(hashString(text, HIGH_SALT), hashString(text, LOW_SALT));
}

/** `digest`'s text for the two hashes of a text. */
export function digestOf(high: number, low: number): string {
  return `${high.toString(16).padStart(8, "0")}${low.toString(16).padStart(8, "0")}`;
}

/** `digest`'s text for a long text, from the SHA-256 of that text in hex. */
export function digestOfSha256(hex: string): string {
  return digest(`sha256:${hex}`);
}

/**
 * `digest(parts.join(""))` without joining them: a long request's parts (a history's messages)
 * are hashed one by one, so no copy of the whole request is made for each call.
 */
export function digestParts(parts: readonly string[]): string {
  let length = 0;
  for (const part of parts) length += part.length;
  if (length <= NATIVE_PREHASH_CHARS) return digest(parts.join(""));
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part, "utf8");
  return digestOfSha256(hash.digest("hex"));
}

/** mulberry32: a seeded generator of floats in [0, 1). */
export class SeededRandom {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let value = this.#state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  integer(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}
