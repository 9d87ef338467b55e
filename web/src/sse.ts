/**
 * Server-sent events over `fetch`: EventSource cannot POST, so the turn stream is read with a
 * ReadableStream reader and parsed by `eventsource-parser`, the parser the backend uses too (the
 * WHATWG rules: any line ending, comments, multi-line data, dispatch on a blank line).
 */
import { createParser, type EventSourceParser } from "eventsource-parser";
import type { TurnEvent } from "./api-types.js";

export interface SseMessage {
  /** The `event:` field; "message" when the server sent none. */
  event: string;
  /** The `data:` lines, joined with "\n". */
  data: string;
  id: string | null;
}

/** Feeds text in, hands completed events out: the library's callbacks as return values. */
export class SseParser {
  private completed: SseMessage[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: (message) => {
      this.completed.push({
        event: message.event ?? "message",
        data: message.data,
        id: message.id ?? null,
      });
    },
  });

  /** Feeds decoded text; returns the events completed by it. */
  push(chunk: string): SseMessage[] {
    this.parser.feed(chunk);
    const messages = this.completed;
    this.completed = [];
    return messages;
  }

  /** The stream ended: an event without its closing blank line is discarded, as the spec says. */
  end(): SseMessage[] {
    this.parser.reset();
    this.completed = [];
    return [];
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
