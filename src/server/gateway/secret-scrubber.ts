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
    let bytes = this.#held.length === 0 ? piece : Buffer.concat([this.#held, piece]);
    this.#held = EMPTY;
    for (const secret of secrets) bytes = replaceAll(bytes, secret);
    const keep = heldTail(bytes, secrets);
    if (keep === 0) return bytes;
    // A copy, not a view (a Buffer's `slice` is one): the caller may reuse its buffer.
    this.#held = Uint8Array.prototype.slice.call(bytes, bytes.length - keep);
    return bytes.subarray(0, bytes.length - keep);
  }

  /** What is still held at the end of the stream (it began a key, but the key never came). */
  end(): Uint8Array {
    const held = this.#held;
    this.#held = EMPTY;
    return held;
  }
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

/** How many bytes at the end of `bytes` are the beginning (not the whole) of some secret. */
function heldTail(bytes: Uint8Array, secrets: readonly Uint8Array[]): number {
  let longest = 0;
  for (const secret of secrets) {
    const first = secret[0];
    // Candidates: where the secret's first byte sits within its length of the end.
    for (let start = Math.max(0, bytes.length - secret.length + 1); start < bytes.length; start++) {
      if (bytes[start] !== first || bytes.length - start <= longest) continue;
      let same = true;
      for (let index = start + 1; same && index < bytes.length; index++) {
        same = bytes[index] === secret[index - start];
      }
      if (same) {
        longest = bytes.length - start;
        break;
      }
    }
  }
  return longest;
}
