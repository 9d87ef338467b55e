/**
 * Pass-through forwarding: the upstream's response bytes, as they arrive (the first call's from
 * its tapped fetch, later rounds' from the adapter's capture hook), turned into the bytes the
 * gateway writes to its client. They go unchanged, byte for
 * byte, with one exception: the lab always asks the upstream for usage
 * (`stream_options.include_usage`), so when the client did not, the usage-only event the upstream
 * adds at the end (a chunk with `choices: []` and `usage`) is the lab's, not the client's, and is
 * dropped. A client that did not ask for it may not expect a chunk without choices (code that
 * reads `chunk.choices[0].delta` breaks on it).
 *
 * Dropping an event means knowing where events end, so when filtering, bytes are handed on per
 * complete SSE event (an event ends at a blank line: `\n\n`, `\r\n\r\n`, `\r\r`, or any mix of
 * the three line endings); only an incomplete trailing event is held back. Line endings are ASCII
 * and never occur inside a multi-byte UTF-8 character, so the bytes are scanned as they are and a
 * piece may split anywhere. When the client asked for usage nothing is held: every piece is
 * handed on as it came.
 *
 * What is left as the upstream sent it: every other event, comments (`: ping`), the `usage: null`
 * an upstream may put on every chunk when usage is asked for, and a usage object that comes on a
 * chunk with choices (OpenRouter, some llama.cpp builds): dropping that would drop the answer.
 */

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);
// Shared: neither keeps state between calls here (no streaming decode), and one made per
// response was part of the lab's work before a client's first bytes.
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

export interface ForwardEventsOptions {
  /** The client's own `stream_options.include_usage`: true forwards every byte, unfiltered. */
  client_include_usage: boolean;
}

/** True when the client's request asked for a usage chunk (`stream_options.include_usage`). */
export function clientIncludesUsage(body: Readonly<Record<string, unknown>>): boolean {
  const options = body.stream_options;
  return (
    typeof options === "object" &&
    options !== null &&
    (options as { include_usage?: unknown }).include_usage === true
  );
}

/**
 * One per response: hand each piece that arrives to `pushInto` (or `push`) and write what it
 * gives, then write what `end` returns when the upstream's body is over.
 */
export class ForwardEvents {
  readonly #filter: boolean;
  /** The incomplete trailing event's bytes so far (copies: the caller may reuse its buffers). */
  #held: Uint8Array[] = [];
  /** The next byte begins a line: a line ending now is a blank line, the end of an event. */
  #lineStart = true;
  /** The last byte was a CR: an LF now is the second half of that CRLF, not a line of its own. */
  #afterCr = false;
  /**
   * An event ended on a CR at the end of a piece: an LF opening the next piece completes its
   * CRLF and goes (or is dropped) with it.
   */
  #pendingLf: "keep" | "drop" | null = null;
  #dropped = 0;

  constructor(options: ForwardEventsOptions) {
    this.#filter = !options.client_include_usage;
  }

  /** How many usage-only events were dropped so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * The bytes to write for `piece`, possibly empty; views of `piece` where they can be (write
   * them before the piece's buffer is reused).
   */
  push(piece: Uint8Array | string): Uint8Array {
    const bytes = typeof piece === "string" ? ENCODER.encode(piece) : piece;
    if (!this.#filter || bytes.length === 0) return bytes;
    const out: Uint8Array[] = [];
    this.pushInto(bytes, out);
    return join(out);
  }

  /**
   * As `push`, but the bytes to write are appended to `out` as they are (views and held pieces),
   * not joined into one copy: the caller writes them in a row.
   */
  pushInto(piece: Uint8Array | string, out: Uint8Array[]): void {
    const bytes = typeof piece === "string" ? ENCODER.encode(piece) : piece;
    if (bytes.length === 0) return;
    if (!this.#filter) {
      out.push(bytes);
      return;
    }
    // Almost every upstream ends its lines with LF alone: its events are found with the native
    // search for LF, and one look at all of them says whether any could be the usage-only event,
    // rather than a scan of every byte in JS and a decode and a test per event.
    if (this.#pendingLf === null && !this.#afterCr && bytes.indexOf(CR) === -1) {
      if (this.#pushLfOnly(bytes, out)) return;
    }
    this.#scan(bytes, out);
  }

  /**
   * A piece without CR (after a piece that did not end inside a CRLF): false, with nothing
   * changed, when one of its events may be the usage-only event (the byte scan decides).
   */
  #pushLfOnly(bytes: Uint8Array, out: Uint8Array[]): boolean {
    const length = bytes.length;
    // Just past the piece's last blank line: an LF that starts a line ends an event.
    let lastEnd = 0;
    for (
      let at = bytes.lastIndexOf(LF);
      at !== -1;
      at = at === 0 ? -1 : bytes.lastIndexOf(LF, at - 1)
    ) {
      if (at === 0 ? this.#lineStart : bytes[at - 1] === LF) {
        lastEnd = at + 1;
        break;
      }
    }
    const held = this.#held;
    if (lastEnd > 0) {
      // Latin-1 keeps one character per byte: the ASCII pattern is found wherever it is, and a
      // character split between pieces cannot hide it.
      let text = "";
      for (const piece of held) text += latin1(piece, piece.length);
      text += latin1(bytes, lastEnd);
      if (EMPTY_CHOICES.test(text)) return false;
      // No event that ends here is the usage-only one: they all go, as they came.
      if (held.length > 0) {
        out.push(...held);
        this.#held = [];
      }
      out.push(lastEnd === length ? bytes : bytes.subarray(0, lastEnd));
    }
    if (lastEnd < length) this.#held.push(bytes.slice(lastEnd));
    this.#lineStart = bytes[length - 1] === LF;
    return true;
  }

  /** Every byte looked at: any line endings, and the piece that holds a usage-only event. */
  #scan(bytes: Uint8Array, out: Uint8Array[]): void {
    let index = 0;
    /** Where the run of kept bytes not yet put in `out` starts. */
    let keptFrom = 0;
    if (this.#pendingLf !== null) {
      if (bytes[0] === LF) {
        index = 1;
        if (this.#pendingLf === "drop") keptFrom = 1;
      }
      this.#pendingLf = null;
      this.#afterCr = false;
    }
    /** Where the current (not yet complete) event starts in this piece. */
    let eventStart = index;

    // The scan state in locals: a private field read per byte was most of the scan's cost.
    let lineStart = this.#lineStart;
    let afterCr = this.#afterCr;
    for (; index < bytes.length; index += 1) {
      const byte = bytes[index] as number;
      if (byte > CR || (byte !== LF && byte !== CR)) {
        lineStart = false;
        afterCr = false;
        continue;
      }
      if (byte === LF && afterCr) {
        afterCr = false;
        continue;
      }
      if (!lineStart) {
        lineStart = true;
        afterCr = byte === CR;
        continue;
      }
      // A blank line: the event ends here, with its LF too when this CR starts a CRLF.
      let end = index + 1;
      let endsOnOpenCr = false;
      if (byte === CR) {
        if (end < bytes.length) {
          if (bytes[end] === LF) end += 1;
        } else {
          endsOnOpenCr = true;
        }
      }
      const held = this.#held;
      if (held.length > 0) this.#held = [];
      const drop = this.#isUsageOnly(held, bytes.subarray(eventStart, end));
      if (drop) {
        this.#dropped += 1;
        if (eventStart > keptFrom) out.push(bytes.subarray(keptFrom, eventStart));
        keptFrom = end;
      } else if (held.length > 0) {
        // Only the piece's first event can have held bytes, and nothing of this piece precedes it.
        out.push(...held);
      }
      if (endsOnOpenCr) this.#pendingLf = drop ? "drop" : "keep";
      eventStart = end;
      index = end - 1;
      lineStart = true;
      afterCr = false;
    }
    this.#lineStart = lineStart;
    this.#afterCr = afterCr;

    if (eventStart > keptFrom) out.push(bytes.subarray(keptFrom, eventStart));
    if (eventStart < bytes.length) this.#held.push(bytes.slice(eventStart));
  }

  /**
   * What is left when the upstream's body ends: an event without its blank line, forwarded as
   * it came (dropped if it is a usage-only event: the adapter's decoder reads such an event too).
   */
  end(): Uint8Array {
    const held = this.#held;
    this.#held = [];
    this.#lineStart = true;
    this.#afterCr = false;
    this.#pendingLf = null;
    if (held.length === 0) return EMPTY;
    if (this.#isUsageOnly(held, EMPTY)) {
      this.#dropped += 1;
      return EMPTY;
    }
    return join(held);
  }

  #isUsageOnly(held: readonly Uint8Array[], tail: Uint8Array): boolean {
    // Joined before decoding: a held piece may end inside a character.
    const text = DECODER.decode(held.length === 0 ? tail : join([...held, tail]));
    // Most events are answer chunks: a cheap look for an empty array spares them the JSON parse.
    if (!EMPTY_CHOICES.test(text)) return false;
    const data = eventData(text);
    if (data === null) return false;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return false;
    }
    if (typeof chunk !== "object" || chunk === null) return false;
    const { choices, usage } = chunk as { choices?: unknown; usage?: unknown };
    return (
      Array.isArray(choices) && choices.length === 0 && typeof usage === "object" && usage !== null
    );
  }
}

/** JSON allows only space, tab, CR and LF between tokens. */
const EMPTY_CHOICES = /"choices"[ \t\r\n]*:[ \t\r\n]*\[[ \t\r\n]*\]/;

/** The event's `data` field as the SSE spec assembles it (its lines joined by LF), or null. */
function eventData(event: string): string | null {
  let data: string | null = null;
  for (const line of event.split(/\r\n|\r|\n/)) {
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== "data") continue;
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

/** The first `end` bytes as a Latin-1 string (one character per byte). */
function latin1(bytes: Uint8Array, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString("latin1");
}

function join(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 0) return EMPTY;
  if (parts.length === 1) return parts[0] as Uint8Array;
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
