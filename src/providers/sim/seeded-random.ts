import { createHash } from "node:crypto";

/**
 * Small, dependency-free determinism helpers for the simulated model: a 32-bit string hash and a
 * seeded pseudo-random generator. Not cryptographic; only reproducible.
 */

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function hashString(text: string, salt = 0): number {
  let hash = (0x811c9dc5 ^ salt) >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Past this length `digest` first hashes natively: a JS loop over a huge request blocks. */
export const NATIVE_PREHASH_CHARS = 65_536;

/**
 * A 16-hex-digit digest of `text` (two salted FNV-1a hashes), for ids and cache keys. A text past
 * 64 Ki characters is digested through its SHA-256 (still deterministic; shorter texts keep the
 * digests, and so the replies, they always had).
 */
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
  return digest(`sha256:${hash.digest("hex")}`);
}

export function digest(text: string): string {
  if (text.length > NATIVE_PREHASH_CHARS) {
    return digest(`sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`);
  }
  const high = hashString(text, 0x5bd1e995).toString(16).padStart(8, "0");
  const low = hashString(text, 0x27d4eb2f).toString(16).padStart(8, "0");
  return `${high}${low}`;
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
