/**
 * Server-sent events over `fetch`: EventSource cannot POST, so the turn stream is read with a
 * ReadableStream reader and parsed here, following the WHATWG "event stream" rules (any line
 * ending, comments, multi-line data, one optional space after the colon, dispatch on a blank line,
 * an unterminated last event is dropped).
 */
import type { TurnEvent } from "./api-types.js";

export interface SseMessage {
  /** The `event:` field; "message" when the server sent none. */
  event: string;
  /** The `data:` lines, joined with "\n". */
  data: string;
  id: string | null;
}

export class SseParser {
  private buffer = "";
  /** A chunk ended in "\r": a "\n" opening the next chunk belongs to the same line ending. */
  private pendingCarriageReturn = false;
  private eventType = "";
  private dataLines: string[] = [];
  private hasData = false;
  private lastEventId: string | null = null;

  /** Feeds decoded text; returns the events completed by it. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCarriageReturn && text.startsWith("\n")) text = text.slice(1);
    this.pendingCarriageReturn = false;
    this.buffer += text;
    const messages: SseMessage[] = [];
    let start = 0;
    for (let index = 0; index < this.buffer.length; index++) {
      const character = this.buffer[index];
      if (character !== "\n" && character !== "\r") continue;
      if (character === "\r") {
        if (index + 1 === this.buffer.length) this.pendingCarriageReturn = true;
        else if (this.buffer[index + 1] === "\n") {
          this.processLine(this.buffer.slice(start, index), messages);
          index++;
          start = index + 1;
          continue;
        }
      }
      this.processLine(this.buffer.slice(start, index), messages);
      start = index + 1;
    }
    this.buffer = this.buffer.slice(start);
    return messages;
  }

  /** The stream ended: an event without its closing blank line is discarded, as the spec says. */
  end(): SseMessage[] {
    this.buffer = "";
    this.resetEvent();
    return [];
  }

  private processLine(line: string, messages: SseMessage[]): void {
    if (line === "") {
      if (this.hasData) {
        messages.push({
          event: this.eventType || "message",
          data: this.dataLines.join("\n"),
          id: this.lastEventId,
        });
      }
      this.resetEvent();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) this.lastEventId = value;
        break;
      default:
        // "retry" and unknown fields mean nothing to a fetch-based reader.
        break;
    }
  }

  private resetEvent(): void {
    this.eventType = "";
    this.dataLines = [];
    this.hasData = false;
  }
}

/** Reads one SSE message as a TurnEvent; anything else (bad JSON, no `type`) is null. */
export function parseTurnEvent(message: SseMessage): TurnEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string") {
    // A server that names the type only in the `event:` field.
    if (message.event === "message") return null;
    return { ...(value as object), type: message.event } as TurnEvent;
  }
  return value as TurnEvent;
}

/** Decodes a byte stream and yields its SSE messages as they complete. */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseMessage, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const cancel = () => {
    reader.cancel().catch(() => undefined);
  };
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    signal?.removeEventListener("abort", cancel);
    try {
      reader.releaseLock();
    } catch {
      // Already released by a cancelled read.
    }
  }
}
