import { StringDecoder } from "node:string_decoder";
import type { CallPayloadRecord } from "../domain/call-capture.js";
import { knownSecretsBlanked, piecesMayHoldSecret, redactKnownSecrets } from "../domain/secrets.js";
import type { CallCapture } from "../providers/chat-model.js";

/** One call's captured bodies, cut to the cap, as `appendCallPayload` takes them. */
export type CapturedBodies = Pick<
  CallPayloadRecord,
  | "request_body"
  | "response_body"
  | "request_bytes"
  | "response_bytes"
  | "request_truncated"
  | "response_truncated"
> & {
  /**
   * The response body's own UTF-8 bytes, given only when its text needs no redaction (no piece
   * of it, nor a join between two, may hold a key: `piecesMayHoldSecret`) and they are exactly
   * that text's encoding (every read raw bytes, valid UTF-8, no character left open): the body
   * is then stored from these, its text never joined nor encoded again.
   */
  response_utf8?: Uint8Array;
};

/**
 * Receives a call's wire traffic and keeps at most `maxBytes` of the request body and as much of
 * the response, counting the full sizes. The cut is in bytes (the cap is a storage bound) but
 * never inside a UTF-8 character, so a kept body is always valid text. A retried request replaces
 * the body of the attempt before it: the last body sent is the one that was answered.
 */
/** What a response that held the lab's key is stored as. */
export const WITHHELD_RESPONSE =
  "[not kept: the response held a key of the lab's, blanked in the recorded answer]";

export class CaptureSink implements CallCapture {
  readonly #maxBytes: number;
  #request = new BodyBuffer(0);
  readonly #response: BodyBuffer;
  #expectedBlanks = 0;
  #seen = false;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
    this.#request = new BodyBuffer(maxBytes);
    this.#response = new BodyBuffer(maxBytes);
  }

  request(body: string): void {
    this.#seen = true;
    this.#request = new BodyBuffer(this.#maxBytes);
    this.#request.add(body);
  }

  response(chunk: Uint8Array | string): void {
    this.#seen = true;
    this.#response.add(chunk);
  }

  /**
   * The answer held `count` keys of the lab's, blanked as it streamed (`SecretTextScrubber`): the
   * raw response holds each too, and when one was split between events, in pieces that no
   * redaction of its text can find. The raw response is then not kept (its sizes are); it is
   * when a redaction of it finds them all whole.
   */
  expectBlanked(count: number): void {
    this.#expectedBlanks = count;
  }

  /** False when the model reported nothing (a model that does not capture): no payload to keep. */
  get captured(): boolean {
    return this.#seen;
  }

  #keysWhole(text: string): boolean {
    if (this.#expectedBlanks === 0) return true;
    return knownSecretsBlanked(text, redactKnownSecrets(text)) >= this.#expectedBlanks;
  }

  bodies(): CapturedBodies {
    const request = this.#request.result();
    const response = this.#response.result();
    const bodies: CapturedBodies = {
      request_body: request.text,
      response_body: this.#keysWhole(response.text) ? response.text : WITHHELD_RESPONSE,
      request_bytes: request.bytes,
      response_bytes: response.bytes,
      request_truncated: request.truncated,
      response_truncated: response.truncated,
    };
    // A response that held a key of the lab's is not clean, and its pieces say so.
    const utf8 = this.#expectedBlanks === 0 ? this.#response.cleanBytes() : null;
    if (utf8 !== null) bodies.response_utf8 = utf8;
    return bodies;
  }
}

/**
 * One body as text, decoded piece by piece as it arrives. A 200 KB body was once kept as byte
 * copies, joined into one buffer and decoded whole: each of those two large blocks is fresh
 * memory (V8's large-object space, or an mmap), and on the lab's VM their page faults made the
 * capture of a 1,000-chunk stream cost 1.9 ms. Pieces of a read's size decode in the young
 * generation, and the one large string is made once, when the text is first read whole.
 * StringDecoder holds a character split between reads, so every split gives the same text.
 */
class BodyBuffer {
  #text = "";
  /**
   * `#text` in pieces of at least `SCAN_PIECE` characters (reads joined until they are): scanned
   * for keys without joining the whole (`cleanBytes`). A stream read event by event (a local
   * model's, token by token) scanned per read cost more than the whole text scanned at once.
   */
  readonly #pieces: string[] = [];
  /** The reads decoded since the last of `#pieces`. */
  #group = "";
  /**
   * The bytes kept, copied into blocks of `BYTE_BLOCK` (the caller may reuse its buffer; a copy
   * per read cost as much as the scan saved on a stream read event by event); null once a piece
   * came as text (the sim), which has none.
   */
  #raw: Buffer[] | null = [];
  /** How much of the last of `#raw` is filled. */
  #rawUsed = 0;
  /** A piece decoded to U+FFFD: the bytes are not that text's encoding. */
  #replaced = false;
  #utf8: StringDecoder | null = null;
  /**
   * The last bytes given to the decoder (four, as many as a character has): a body read while a
   * character is still open shows those bytes as the end of a stream would, and the decoder keeps
   * them, so the character completes if the rest comes.
   */
  #tail: Uint8Array = NO_BYTES;
  #kept = 0;
  #bytes = 0;
  #full = false;

  constructor(readonly maxBytes: number) {}

  add(chunk: Uint8Array | string): void {
    const length = typeof chunk === "string" ? Buffer.byteLength(chunk, "utf8") : chunk.length;
    this.#bytes += length;
    if (this.#full || length === 0) return;
    if (typeof chunk === "string") this.#raw = null;
    if (length <= this.maxBytes - this.#kept) {
      this.#kept += length;
      if (typeof chunk !== "string") {
        this.#write(chunk);
        return;
      }
      // Bytes of a character left open before this text can no longer be completed.
      if (this.#utf8 !== null) this.#text += this.#utf8.end();
      this.#tail = NO_BYTES;
      // As its bytes were counted (and would be stored): a lone surrogate is U+FFFD in UTF-8.
      this.#text += wellFormed(chunk);
      return;
    }
    // The cap falls in this piece: what fits, up to the last whole character, and nothing more.
    this.#full = true;
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    const room = Math.max(0, this.maxBytes - this.#kept);
    this.#kept = this.maxBytes;
    // A character still open at the cut is dropped with the rest (the decoder is not ended).
    this.#write(bytes.subarray(0, room));
  }

  #write(bytes: Uint8Array): void {
    if (this.#utf8 === null) this.#utf8 = new StringDecoder("utf8");
    const piece = this.#utf8.write(bytes);
    this.#text += piece;
    if (this.#raw !== null) {
      this.#keep(this.#raw, bytes);
      this.#group += piece;
      if (this.#group.length >= SCAN_PIECE) {
        this.#pieces.push(this.#group);
        this.#group = "";
      }
      // Searching a one-byte string (ASCII, the usual stream) for U+FFFD costs nothing.
      if (piece.includes("\uFFFD")) this.#replaced = true;
    }
    // Copied: a Buffer's `slice` is a view, and the caller may reuse its buffer.
    this.#tail =
      bytes.length >= 4
        ? Uint8Array.prototype.slice.call(bytes, -4)
        : Buffer.concat([this.#tail, bytes]).subarray(-4);
  }

  #keep(blocks: Buffer[], bytes: Uint8Array): void {
    for (let offset = 0; offset < bytes.length; ) {
      let block = blocks[blocks.length - 1];
      if (block === undefined || this.#rawUsed === block.length) {
        block = Buffer.allocUnsafe(Math.max(BYTE_BLOCK, bytes.length - offset));
        blocks.push(block);
        this.#rawUsed = 0;
      }
      const length = Math.min(block.length - this.#rawUsed, bytes.length - offset);
      block.set(bytes.subarray(offset, offset + length), this.#rawUsed);
      this.#rawUsed += length;
      offset += length;
    }
  }

  /**
   * The body's bytes when they are exactly its text's UTF-8 and that text needs no redaction
   * (see `CapturedBodies.response_utf8`), else null. Checked piece by piece, so a clean body's
   * text is never made whole (a block of fresh memory as large as the body).
   */
  cleanBytes(): Uint8Array | null {
    if (this.#raw === null || this.#replaced || this.#raw.length === 0) return null;
    const tail = this.#tail;
    // A character still open reads as U+FFFD (see `result`), which its bytes are not.
    if (!this.#full && characterBoundary(tail, tail.length) !== tail.length) return null;
    if (piecesMayHoldSecret(this.#group === "" ? this.#pieces : [...this.#pieces, this.#group])) {
      return null;
    }
    const last = this.#raw.length - 1;
    const blocks = this.#raw.map((block, index) =>
      index === last ? block.subarray(0, this.#rawUsed) : block,
    );
    const joined = blocks.length === 1 ? (blocks[0] as Buffer) : Buffer.concat(blocks);
    // Cut at the cap, a character open at the cut is dropped with the rest (see `add`).
    return joined.subarray(0, characterBoundary(joined, joined.length));
  }

  /** The body so far; reading it changes nothing, so more may come after. */
  result(): { text: string; bytes: number; truncated: boolean } {
    const tail = this.#tail;
    const open = this.#full ? 0 : tail.length - characterBoundary(tail, tail.length);
    const text =
      open === 0 ? this.#text : this.#text + Buffer.from(tail.subarray(-open)).toString("utf8");
    return { text, bytes: this.#bytes, truncated: this.#bytes > this.#kept };
  }
}

const NO_BYTES = new Uint8Array(0);

/**
 * 16 K characters: few enough pieces that each scan's own cost is lost in its length, and each
 * one small enough to be made in V8's young generation rather than as a large object of its own.
 */
const SCAN_PIECE = 16 * 1024;

/** A read's bytes are copied into blocks this large: a few allocations a body, not one a read. */
const BYTE_BLOCK = 64 * 1024;

/** `String.prototype.toWellFormed` (in Node 20; TypeScript's ES2023 library does not declare it). */
const wellFormed = (text: string): string =>
  (text as unknown as { toWellFormed(): string }).toWellFormed();

/** The largest index ≤ `end` that does not split a UTF-8 sequence of `bytes`. */
export function characterBoundary(bytes: Uint8Array, end: number): number {
  let start = end;
  // Back over continuation bytes (10xxxxxx) to the sequence's lead byte, at most 3.
  while (start > 0 && end - start < 4 && ((bytes[start - 1] ?? 0) & 0xc0) === 0x80) start--;
  if (start === 0) return end;
  const lead = bytes[start - 1] ?? 0;
  // F8-FF begin no character (nor does a decoder wait for more after one): not cut, as any
  // invalid byte, it reads as U+FFFD.
  const length = lead >= 0xf8 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start - 1 + length > end ? start - 1 : end;
}
