import fc from "fast-check";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { collectStream, FakeOpenAIServer, streamReply } from "../../../test/fake-openai-server.js";
import { loadProviderFixtures } from "../../../test/fixtures/provider-streams/index.js";
import { ChatMessage } from "../../domain/messages.js";
import { OpenAIChatModel } from "../../providers/openai/openai-chat-model.js";
import { clientIncludesUsage, ForwardEvents } from "./forward-events.js";

/**
 * Pass-through bytes: unchanged except the usage-only event the lab asked for on the client's
 * behalf, however the upstream's body is split into reads.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface StreamEvent {
  text: string;
  /** The chunk with `choices: []` and `usage` that include_usage adds. */
  usage_only: boolean;
}

/** A recorded stream as its events, each with its blank line (all fixtures use `\n\n`). */
function fixtureEvents(sse: string): StreamEvent[] {
  const events = sse.split(/(?<=\n\n)/);
  expect(events.join("")).toBe(sse);
  return events.map((text) => ({
    text,
    // The fixtures write JSON without spaces: the usage-only event reads exactly so.
    usage_only: text.includes('"choices":[]') && text.includes('"usage":{'),
  }));
}

const USAGE = '{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}';

/** Shapes the fixtures lack: a keep-alive comment, multi-byte text, data over several lines. */
const EXTRA_EVENTS: StreamEvent[] = [
  { text: ": ping\n\n", usage_only: false },
  {
    text: 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"héllo 🐱 猫 — ok"},"finish_reason":null}]}\n\n',
    usage_only: false,
  },
  {
    // An empty `tools` array is not an empty `choices` array.
    text: 'event: message\nid: 7\ndata: {"id":"c","choices":[{"index":0,"delta":{"content":"[]"},"finish_reason":null}],\ndata: "tools":[]}\n\n',
    usage_only: false,
  },
  {
    // Split over two data lines, with spaces: still the usage-only event.
    text: `data: {"id":"c", "choices": [ ],\ndata: "usage": ${USAGE}}\n\n`,
    usage_only: true,
  },
];

type LineEnding = "\n" | "\r\n" | "\r";

/** The same events with every line ending replaced by `ending` (a function: a mix). */
function withLineEndings(
  events: readonly StreamEvent[],
  ending: (previous: LineEnding | null) => LineEnding,
): StreamEvent[] {
  let previous: LineEnding | null = null;
  return events.map((event) => ({
    ...event,
    text: event.text.replace(/\n/g, () => {
      previous = ending(previous);
      return previous;
    }),
  }));
}

function run(
  pieces: readonly Uint8Array[],
  client_include_usage: boolean,
): { output: Uint8Array[]; forwarder: ForwardEvents } {
  const forwarder = new ForwardEvents({ client_include_usage });
  const output = pieces.map((piece) => forwarder.push(piece));
  output.push(forwarder.end());
  return { output, forwarder };
}

function concat(parts: readonly Uint8Array[]): string {
  return decoder.decode(Buffer.concat(parts));
}

/** `bytes` cut at the given offsets (sorted, duplicates allowed: empty pieces happen too). */
function splitAt(bytes: Uint8Array, offsets: readonly number[]): Uint8Array[] {
  const cuts = [...offsets].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const cut of cuts) {
    pieces.push(bytes.slice(start, cut));
    start = cut;
  }
  pieces.push(bytes.slice(start));
  return pieces;
}

const fixtures = loadProviderFixtures();

/** Each recorded stream, plus one with the extra shapes before its last event. */
const streams: { name: string; events: StreamEvent[] }[] = fixtures.flatMap((fixture) => {
  const events = fixtureEvents(fixture.sse);
  return [
    { name: fixture.name, events },
    { name: `${fixture.name}+extras`, events: [...EXTRA_EVENTS, ...events] },
  ];
});

/** The events with their lines ended by `mix` in turn (never `\r` then `\n`: see below). */
function withMixedEndings(events: readonly StreamEvent[], mix: readonly LineEnding[]) {
  let line = 0;
  return withLineEndings(events, (previous) => {
    const pick = mix[line++ % mix.length] as LineEnding;
    return previous === "\r" && pick === "\n" ? "\r" : pick;
  });
}

/** A line ending per line; `\r` then `\n` would read as one CRLF, so that pair is never made. */
const lineEndingMix = fc.array(fc.constantFrom<LineEnding>("\n", "\r\n", "\r"), {
  minLength: 1,
  maxLength: 64,
});

describe("ForwardEvents: property over recorded streams", () => {
  it("the fixtures include usage-only events to drop, and streams that have none", () => {
    const counts = fixtures.map((fixture) =>
      fixtureEvents(fixture.sse).reduce((sum, event) => sum + (event.usage_only ? 1 : 0), 0),
    );
    expect(counts.filter((count) => count === 1).length).toBeGreaterThanOrEqual(8);
    expect(counts).toContain(0);
    expect(Math.max(...counts)).toBe(1);
  });

  it("forwards every byte but the usage-only event, for any split and any line endings", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...streams),
        lineEndingMix,
        fc.array(fc.nat(), { maxLength: 40 }),
        (stream, mix, rawOffsets) => {
          const events = withMixedEndings(stream.events, mix);
          const input = encoder.encode(events.map((event) => event.text).join(""));
          const offsets = rawOffsets.map((offset) => offset % (input.length + 1));
          const pieces = splitAt(input, offsets);

          const filtered = run(pieces, false);
          const expected = events
            .filter((event) => !event.usage_only)
            .map((event) => event.text)
            .join("");
          expect(concat(filtered.output)).toBe(expected);
          expect(filtered.forwarder.dropped).toBe(
            events.filter((event) => event.usage_only).length,
          );

          // Asked for usage: each piece handed on as it came, nothing held.
          const passed = run(pieces, true);
          pieces.forEach((piece, index) => {
            expect(passed.output[index]).toBe(piece);
          });
          expect(passed.output.at(-1)?.length).toBe(0);
          expect(passed.forwarder.dropped).toBe(0);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("gives the same bytes one byte at a time", () => {
    for (const stream of streams) {
      for (const ending of ["\n", "\r\n", "\r"] as const) {
        const events = withLineEndings(stream.events, () => ending);
        const input = encoder.encode(events.map((event) => event.text).join(""));
        const pieces = Array.from(input, (byte) => Uint8Array.of(byte));
        const expected = events
          .filter((event) => !event.usage_only)
          .map((event) => event.text)
          .join("");
        expect(concat(run(pieces, false).output), `${stream.name} ${JSON.stringify(ending)}`).toBe(
          expected,
        );
      }
    }
  });
});

describe("ForwardEvents.pushInto (what the gateway calls)", () => {
  it("appends every byte but the usage-only event (or every byte, asked for usage) to what the caller has", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...streams),
        lineEndingMix,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        (stream, mix, rawOffsets, client_include_usage) => {
          const events = withMixedEndings(stream.events, mix);
          const input = encoder.encode(events.map((event) => event.text).join(""));
          const pieces = splitAt(
            input,
            rawOffsets.map((offset) => offset % (input.length + 1)),
          );
          const forwarder = new ForwardEvents({ client_include_usage });
          const out: Uint8Array[] = [Uint8Array.of(0x21)];
          for (const piece of pieces) forwarder.pushInto(piece, out);
          out.push(forwarder.end());
          const expected = events
            .filter((event) => client_include_usage || !event.usage_only)
            .map((event) => event.text)
            .join("");
          expect(concat(out)).toBe(`!${expected}`);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("ForwardEvents: what is held and when", () => {
  const usageEvent = `data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":${USAGE}}`;
  const textEvent = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}';

  it("holds back only the incomplete trailing event", () => {
    const forwarder = new ForwardEvents({ client_include_usage: false });
    expect(concat([forwarder.push(textEvent.slice(0, 20))])).toBe("");
    expect(concat([forwarder.push(`${textEvent.slice(20)}\n\n${textEvent.slice(0, 5)}`)])).toBe(
      `${textEvent}\n\n`,
    );
    expect(concat([forwarder.push(`${textEvent.slice(5)}\n`)])).toBe("");
    expect(concat([forwarder.push("\n")])).toBe(`${textEvent}\n\n`);
    expect(forwarder.end().length).toBe(0);
  });

  it("hands a piece of whole events on as the same bytes", () => {
    const forwarder = new ForwardEvents({ client_include_usage: false });
    const piece = encoder.encode(`${textEvent}\n\n: ping\n\n`);
    expect(forwarder.push(piece)).toEqual(piece);
  });

  it("drops the usage-only event with all of its blank line, CRLF split over two pieces", () => {
    const forwarder = new ForwardEvents({ client_include_usage: false });
    const out = [
      forwarder.push(`${textEvent}\r\n\r\n${usageEvent}\r\n\r`),
      forwarder.push("\ndata: [DONE]\r\n\r\n"),
      forwarder.end(),
    ];
    expect(concat(out)).toBe(`${textEvent}\r\n\r\ndata: [DONE]\r\n\r\n`);
    expect(forwarder.dropped).toBe(1);
  });

  it("keeps the LF that completes a kept event's CRLF", () => {
    const forwarder = new ForwardEvents({ client_include_usage: false });
    const out = [forwarder.push(`${textEvent}\r\r`), forwarder.push("\ndata: [DONE]\r\r")];
    out.push(forwarder.end());
    expect(concat(out)).toBe(`${textEvent}\r\r\ndata: [DONE]\r\r`);
  });

  it("flushes a last event without its blank line at the end, unless it is the usage-only one", () => {
    const kept = new ForwardEvents({ client_include_usage: false });
    expect(concat([kept.push(`${textEvent}\n\n${textEvent}`), kept.end()])).toBe(
      `${textEvent}\n\n${textEvent}`,
    );
    const dropped = new ForwardEvents({ client_include_usage: false });
    expect(concat([dropped.push(`${textEvent}\n\n${usageEvent}\n`), dropped.end()])).toBe(
      `${textEvent}\n\n`,
    );
    expect(dropped.dropped).toBe(1);
  });

  it("keeps usage that comes on a chunk with choices, and usage: null", () => {
    const forwarder = new ForwardEvents({ client_include_usage: false });
    const withChoices = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":${USAGE}}\n\n`;
    const nullUsage = 'data: {"choices":[],"usage":null}\n\n';
    expect(concat([forwarder.push(withChoices + nullUsage), forwarder.end()])).toBe(
      withChoices + nullUsage,
    );
  });
});

describe("ForwardEvents fed by the adapter's capture hook", () => {
  it("gives the client the upstream's body minus the usage event, and openai reads it", async () => {
    const fixture = fixtures.find((candidate) => candidate.name === "openai-gpt5");
    if (!fixture) throw new Error("fixture openai-gpt5 is missing");
    const body = encoder.encode(fixture.sse);
    // Written in small uneven pieces, so reads split events, lines and characters.
    const writes: Uint8Array[] = [];
    for (let offset = 0, size = 1; offset < body.length; offset += size, size = (size % 37) + 5) {
      writes.push(body.slice(offset, offset + size));
    }
    const server = await FakeOpenAIServer.start();
    try {
      server.enqueue(streamReply(writes));
      const upstream = new OpenAIChatModel({ model: "gpt-5", base_url: server.baseUrl });
      const clientBody = {
        model: "gpt-5",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      };
      const forwarder = new ForwardEvents({
        client_include_usage: clientIncludesUsage(clientBody),
      });
      const toClient: Uint8Array[] = [];
      const { parts, error } = await collectStream(
        upstream.stream(
          { messages: [ChatMessage.parse({ role: "user", content: "Hi" })] },
          {
            raw_body: clientBody,
            capture: {
              request: () => {},
              response: (piece) => toClient.push(forwarder.push(piece)),
            },
          },
        ),
      );
      toClient.push(forwarder.end());
      expect(error).toBeNull();
      // The lab still read the usage it asked for.
      expect(parts.find((part) => part.type === "usage")).toMatchObject({ estimated: false });
      expect(forwarder.dropped).toBe(1);
      const expected = fixtureEvents(fixture.sse)
        .filter((event) => !event.usage_only)
        .map((event) => event.text)
        .join("");
      expect(concat(toClient)).toBe(expected);

      const openai = new OpenAI({
        apiKey: "lab-token",
        baseURL: "http://127.0.0.1:9/v1",
        fetch: (async () =>
          new Response(Buffer.concat(toClient), {
            headers: { "content-type": "text/event-stream" },
          })) as typeof globalThis.fetch,
      });
      const stream = await openai.chat.completions.create({
        model: "gpt-5",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) {
        // Code written for a client that did not ask for usage: every chunk has a choice.
        text += chunk.choices[0]?.delta.content ?? "";
        expect(chunk.choices).toHaveLength(1);
      }
      expect(text).toBe(fixture.expected.text);
    } finally {
      await server.close();
    }
  });
});

describe("clientIncludesUsage", () => {
  it("is true only for stream_options.include_usage === true", () => {
    expect(clientIncludesUsage({ stream_options: { include_usage: true } })).toBe(true);
    expect(clientIncludesUsage({ stream_options: { include_usage: false } })).toBe(false);
    expect(clientIncludesUsage({ stream_options: null })).toBe(false);
    expect(clientIncludesUsage({})).toBe(false);
  });
});
