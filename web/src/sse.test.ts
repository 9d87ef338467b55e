import { describe, expect, it } from "vitest";
import { parseTurnEvent, readSse, SseParser } from "./sse.js";

function parseAll(chunks: string[]) {
  const parser = new SseParser();
  const messages = chunks.flatMap((chunk) => parser.push(chunk));
  return [...messages, ...parser.end()];
}

describe("SseParser", () => {
  it("reads events with names, data and ids", () => {
    const messages = parseAll([
      'event: round_start\ndata: {"type":"round_start","round_index":1}\nid: 7\n\n',
    ]);
    expect(messages).toEqual([
      { event: "round_start", data: '{"type":"round_start","round_index":1}', id: "7" },
    ]);
  });

  it("joins events split at any byte boundary", () => {
    const text = 'event: text_delta\ndata: {"text":"hé"}\n\nevent: round_end\ndata: {}\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual([
        { event: "text_delta", data: '{"text":"hé"}', id: null },
        { event: "round_end", data: "{}", id: null },
      ]);
    }
  });

  it("accepts CRLF, CR and LF line endings, including a CRLF split across chunks", () => {
    expect(parseAll(["data: a\r\n\r\ndata: b\r\rdata: c\n\n"]).map((m) => m.data)).toEqual([
      "a",
      "b",
      "c",
    ]);
    expect(parseAll(["data: a\r", "\n\r", "\ndata: b\n\n"]).map((m) => m.data)).toEqual(["a", "b"]);
  });

  it("ignores comments (heartbeats), joins multi-line data, strips one space only", () => {
    const messages = parseAll([": keep-alive\n\ndata:  two spaces\ndata:second\n\n"]);
    expect(messages).toEqual([{ event: "message", data: " two spaces\nsecond", id: null }]);
  });

  it("drops an event without data and an unterminated last event", () => {
    expect(parseAll(["event: lonely\n\n", "data: never finished"])).toEqual([]);
  });
});

describe("parseTurnEvent", () => {
  it("reads a TurnEvent from JSON data", () => {
    expect(
      parseTurnEvent({
        event: "text_delta",
        data: '{"type":"text_delta","round_index":1,"text":"hi"}',
        id: null,
      }),
    ).toEqual({ type: "text_delta", round_index: 1, text: "hi" });
  });

  it("takes the type from the event name when the data has none", () => {
    expect(parseTurnEvent({ event: "round_start", data: '{"round_index":2}', id: null })).toEqual({
      type: "round_start",
      round_index: 2,
    });
  });

  it("refuses bad JSON and non-objects", () => {
    expect(parseTurnEvent({ event: "message", data: "not json", id: null })).toBeNull();
    expect(parseTurnEvent({ event: "message", data: "[1]", id: null })).toBeNull();
    expect(parseTurnEvent({ event: "message", data: '{"no":"type"}', id: null })).toBeNull();
  });
});

describe("readSse", () => {
  it("decodes a byte stream whose multi-byte characters straddle chunks", async () => {
    const bytes = new TextEncoder().encode('event: text_delta\ndata: {"text":"€ ok"}\n\n');
    const split = bytes.indexOf(0xe2) + 1; // inside the euro sign
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, split));
        controller.enqueue(bytes.slice(split));
        controller.close();
      },
    });
    const messages = [];
    for await (const message of readSse(body)) messages.push(message);
    expect(messages).toEqual([{ event: "text_delta", data: '{"text":"€ ok"}', id: null }]);
  });

  it("stops when its signal aborts", async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(new TextEncoder().encode("data: first\n\n"));
      },
    });
    const seen: string[] = [];
    for await (const message of readSse(body, controller.signal)) {
      seen.push(message.data);
      controller.abort();
    }
    expect(seen).toEqual(["first"]);
  });
});
