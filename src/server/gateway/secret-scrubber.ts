import { knownSecretBytes, REDACTED } from "../../domain/secrets.js";

const EMPTY = new Uint8Array(0);
const REDACTED_BYTES = Buffer.from(REDACTED, "utf8");

/**
 * Blanks the lab's own credentials (the values `rememberSecretValue` keeps: keys read from the
 * environment, a client's passed-through key) in bytes streamed to a client as they are, such as an
 * upstream's answer passed through byte for byte: an endpoint may quote the key it was sent in an
 * error event, and the client must never see the lab's key. The bytes are matched as bytes (a
 * UTF-8 value found in UTF-8 text is always a whole match), so nothing is decoded and a piece
 * may split anywhere. A value split between two pieces is caught too: a piece's end that could
 * begin one is held back until the next piece shows whether it does. An SSE piece ends with a
 * blank line, which begins no key, so in practice nothing waits.
 */
export class SecretScrubber {
  #held: Uint8Array = EMPTY;

  /** The bytes to send now for `piece` (a copy when anything changed or was held). */
  push(piece: Uint8Array): Uint8Array {
    const secrets = knownSecretBytes();
    if (secrets.length === 0 && this.#held.length === 0) return piece;
    const bytes = this.#held.length === 0 ? piece : Buffer.concat([this.#held, piece]);
    const index = indexOf(secrets);
    const present = presentKeys(bytes, index);
    // Held back: an end that could begin a key, and any key that reaches into it (a key may hold
    // another: the inner one, whole already, is blanked with the outer once that one is whole).
    let holdFrom = bytes.length - heldTail(bytes, index);
    for (let moved = true; moved; ) {
      moved = false;
      for (const secret of present) {
        const at = view(bytes).indexOf(secret, Math.max(0, holdFrom - secret.length + 1));
        if (at !== -1 && at < holdFrom && at + secret.length > holdFrom) {
          holdFrom = at;
          moved = true;
        }
      }
    }
    // A copy, not a view (a Buffer's `slice` is one): the caller may reuse its buffer.
    this.#held =
      holdFrom === bytes.length ? EMPTY : Uint8Array.prototype.slice.call(bytes, holdFrom);
    return blank(holdFrom === bytes.length ? bytes : bytes.subarray(0, holdFrom), present);
  }

  /** What is still held at the end of the stream, its keys blanked (the key it began never came). */
  end(): Uint8Array {
    const held = this.#held;
    this.#held = EMPTY;
    if (held.length === 0) return held;
    return blank(held, presentKeys(held, indexOf(knownSecretBytes())));
  }
}

/**
 * The keys whose first bytes the text holds, longest first (a key inside a longer one goes whole
 * with it): one search for a prefix many keys share (a `pass_client_key` upstream remembers each
 * client's `sk-…`), so a read without it is not searched for each of them.
 */
function presentKeys(bytes: Uint8Array, index: SecretIndex): Uint8Array[] {
  const present: Uint8Array[] = [];
  for (const { prefix, group } of index.byPrefix.values()) {
    if (view(bytes).indexOf(prefix) !== -1) present.push(...group);
  }
  if (present.length > 1) present.sort((a, b) => b.length - a.length);
  return present;
}

function blank(bytes: Uint8Array, keys: readonly Uint8Array[]): Uint8Array {
  let clean = bytes;
  for (const secret of keys) clean = replaceAll(clean, secret);
  return clean;
}

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function replaceAll(bytes: Uint8Array, secret: Uint8Array): Uint8Array {
  const buffer = view(bytes);
  let at = buffer.indexOf(secret);
  if (at === -1) return bytes;
  const parts: Uint8Array[] = [];
  let from = 0;
  while (at !== -1) {
    parts.push(buffer.subarray(from, at), REDACTED_BYTES);
    from = at + secret.length;
    at = buffer.indexOf(secret, from);
  }
  parts.push(buffer.subarray(from));
  return Buffer.concat(parts);
}

/** The remembered keys grouped for scanning, made once per list `knownSecretBytes` returns. */
interface SecretIndex {
  /** Keys by their first bytes (a key that begins another shares them), keyed as latin1 text. */
  byPrefix: Map<string, { prefix: Buffer; group: Uint8Array[] }>;
  /** Keys by their first byte, for the tail that could begin one. */
  byFirstByte: Map<number, Uint8Array[]>;
  longest: number;
}

const PREFIX_BYTES = 3;
const indexes = new WeakMap<readonly Uint8Array[], SecretIndex>();

function indexOf(secrets: readonly Uint8Array[]): SecretIndex {
  const known = indexes.get(secrets);
  if (known !== undefined) return known;
  const index: SecretIndex = { byPrefix: new Map(), byFirstByte: new Map(), longest: 0 };
  for (const secret of secrets) {
    const prefix = Buffer.from(secret.subarray(0, PREFIX_BYTES));
    const key = prefix.toString("latin1");
    const entry = index.byPrefix.get(key) ?? { prefix, group: [] };
    entry.group.push(secret);
    index.byPrefix.set(key, entry);
    const first = secret[0] as number;
    const sameFirst = index.byFirstByte.get(first) ?? [];
    sameFirst.push(secret);
    index.byFirstByte.set(first, sameFirst);
    index.longest = Math.max(index.longest, secret.length);
  }
  indexes.set(secrets, index);
  return index;
}

/** How many bytes at the end of `bytes` are the beginning (not the whole) of some secret. */
function heldTail(bytes: Uint8Array, index: SecretIndex): number {
  // From the farthest start a key could have, so the first that fits is the longest tail.
  for (let start = Math.max(0, bytes.length - index.longest + 1); start < bytes.length; start++) {
    const candidates = index.byFirstByte.get(bytes[start] as number);
    if (candidates === undefined) continue;
    for (const secret of candidates) {
      if (secret.length <= bytes.length - start) continue;
      let same = true;
      for (let at = start + 1; same && at < bytes.length; at++) {
        same = bytes[at] === secret[at - start];
      }
      if (same) return bytes.length - start;
    }
  }
  return 0;
}
