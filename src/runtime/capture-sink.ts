import type { CallCapture } from "../providers/chat-model.js";

/** One call's captured bodies, cut to the cap, as `appendCallPayload` takes them. */
export interface CapturedBodies {
  request_body: string;
  response_body: string;
  request_bytes: number;
  response_bytes: number;
  request_truncated: boolean;
  response_truncated: boolean;
}

/**
 * Receives a call's wire traffic and keeps at most `maxBytes` of the request body and as much of
 * the response, counting the full sizes. The cut is in bytes (the cap is a storage bound) but
 * never inside a UTF-8 character, so a kept body is always valid text. A retried request replaces
 * the body of the attempt before it: the last body sent is the one that was answered.
 */
export class CaptureSink implements CallCapture {
  readonly #maxBytes: number;
  #request = new BodyBuffer(0);
  readonly #response: BodyBuffer;
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

  /** False when the model reported nothing (a model that does not capture): no payload to keep. */
  get captured(): boolean {
    return this.#seen;
  }

  bodies(): CapturedBodies {
    const request = this.#request.result();
    const response = this.#response.result();
    return {
      request_body: request.text,
      response_body: response.text,
      request_bytes: request.bytes,
      response_bytes: response.bytes,
      request_truncated: request.truncated,
      response_truncated: response.truncated,
    };
  }
}

const encoder = new TextEncoder();

class BodyBuffer {
  readonly #chunks: Uint8Array[] = [];
  #kept = 0;
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  add(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    this.#bytes += bytes.length;
    const room = this.maxBytes - this.#kept;
    if (room <= 0) return;
    // A copy: a caller may reuse its buffer once this returns.
    const kept = bytes.slice(0, room);
    this.#chunks.push(kept);
    this.#kept += kept.length;
  }

  result(): { text: string; bytes: number; truncated: boolean } {
    const all = Buffer.concat(this.#chunks);
    const truncated = this.#bytes > this.#kept;
    const end = truncated ? characterBoundary(all, all.length) : all.length;
    return { text: all.subarray(0, end).toString("utf8"), bytes: this.#bytes, truncated };
  }
}

/** The largest index ≤ `end` that does not split a UTF-8 sequence of `bytes`. */
export function characterBoundary(bytes: Uint8Array, end: number): number {
  let start = end;
  // Back over continuation bytes (10xxxxxx) to the sequence's lead byte, at most 3.
  while (start > 0 && end - start < 4 && ((bytes[start - 1] ?? 0) & 0xc0) === 0x80) start--;
  if (start === 0) return end;
  const lead = bytes[start - 1] ?? 0;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start - 1 + length > end ? start - 1 : end;
}
