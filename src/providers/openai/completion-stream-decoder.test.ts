import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  completionChunk,
  FINAL_TERMINATORS,
  SSE_DONE,
  sseEvent,
  usageChunk,
} from "../../../test/fake-openai-server.js";
import { ProviderStreamError } from "../errors.js";
import { CompletionStreamDecoder, decodeCompletionStream } from "./completion-stream-decoder.js";

/** The pure SSE-bytes-to-parts core, fed without any server. */

const encoder = new TextEncoder();

function bytesOf(...events: string[]): Uint8Array[] {
  return [encoder.encode(events.join(""))];
}

function failureOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("CompletionStreamDecoder", () => {
  it("turns chunks into deltas, then summarises finish reason, usage and tool calls", () => {
    const { parts, summary } = decodeCompletionStream(
      bytesOf(
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        sseEvent(completionChunk({ content: "Hello" })),
        sseEvent(
          completionChunk({
            tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } }],
          }),
        ),
        sseEvent(completionChunk({}, "tool_calls")),
        sseEvent(usageChunk({ prompt_tokens: 9, completion_tokens: 4, cached_tokens: 3 })),
        SSE_DONE,
      ),
    );
    expect(parts).toEqual([
      { type: "text-delta", text: "Hello" },
      { type: "tool-call-delta", index: 0, id: "call_1", name: "f", arguments_delta: "{}" },
      { type: "tool-call", index: 0, id: "call_1", name: "f", raw_arguments: "{}" },
    ]);
    expect(summary).toMatchObject({
      finish_reason: "tool_calls",
      text: "Hello",
      usage: {
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13, cached_tokens: 3 },
        source: "endpoint",
      },
      response_model: "fake-model",
      response_id: "chatcmpl-fake",
    });
  });

  it("ignores everything after [DONE]", () => {
    const { parts } = decodeCompletionStream(
      bytesOf(
        sseEvent(completionChunk({ content: "a" }, "stop")),
        SSE_DONE,
        sseEvent(completionChunk({ content: "after" })),
        "data: not json\n\n",
      ),
    );
    expect(parts).toEqual([{ type: "text-delta", text: "a" }]);
  });

  it("accepts CRLF line endings, comments, content-part lists, and keeps refusals apart", () => {
    const { parts } = decodeCompletionStream(
      bytesOf(
        ": OPENROUTER PROCESSING\r\n\r\n",
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: [{ type: "text", text: "x" }] } }] })}\r\n\r\n`,
        sseEvent({ choices: [{ index: 0, delta: { content: null, refusal: "no" } }] }),
        sseEvent({ choices: [{ index: 0, delta: { refusal: false }, finish_reason: "stop" }] }),
      ),
    );
    expect(parts).toEqual([
      { type: "text-delta", text: "x" },
      { type: "refusal-delta", text: "no" },
    ]);
  });

  it("places tool calls without an index (Gemini) by their id", () => {
    const call = (id: string | undefined, name: string | undefined, args: string) => ({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { ...(id ? { id } : {}), function: { ...(name ? { name } : {}), arguments: args } },
            ],
          },
        },
      ],
    });
    const { parts } = decodeCompletionStream(
      bytesOf(
        sseEvent(call("a", "f", "{")),
        sseEvent(call(undefined, undefined, "}")),
        sseEvent(call("b", "g", "[]")),
        sseEvent(completionChunk({}, "tool_calls")),
      ),
    );
    expect(parts.filter((part) => part.type === "tool-call")).toEqual([
      { type: "tool-call", index: 0, id: "a", name: "f", raw_arguments: "{}" },
      { type: "tool-call", index: 1, id: "b", name: "g", raw_arguments: "[]" },
    ]);
  });

  it("reports id and name once per index even when the server repeats them", () => {
    const delta = (args: string) =>
      completionChunk({
        tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: args } }],
      });
    const { parts } = decodeCompletionStream(
      bytesOf(
        sseEvent(delta("{")),
        sseEvent(delta("}")),
        sseEvent(completionChunk({}, "tool_calls")),
      ),
    );
    expect(parts.slice(0, 2)).toEqual([
      { type: "tool-call-delta", index: 0, id: "c", name: "f", arguments_delta: "{" },
      { type: "tool-call-delta", index: 0, id: null, name: null, arguments_delta: "}" },
    ]);
  });

  it("gives a tool call without an id a generated one", () => {
    const { parts } = decodeCompletionStream(
      bytesOf(
        sseEvent(
          completionChunk({ tool_calls: [{ index: 0, function: { name: "f", arguments: "{}" } }] }),
        ),
        sseEvent(completionChunk({}, "tool_calls")),
      ),
      { createToolCallId: (index) => `generated_${index}` },
    );
    expect(parts.at(-1)).toMatchObject({ type: "tool-call", id: "generated_0", name: "f" });
  });

  it("returns the deltas before a failure, then throws it from end()", () => {
    const decoder = new CompletionStreamDecoder();
    const parts = decoder.push(
      encoder.encode(`${sseEvent(completionChunk({ content: "ok" }))}data: {broken\n\n`),
    );
    expect(parts).toEqual([{ type: "text-delta", text: "ok" }]);
    expect(decoder.finished).toBe(true);
    const error = failureOf(() => decoder.end());
    expect(error).toBeInstanceOf(ProviderStreamError);
    expect(error).toMatchObject({ failure: "malformed_json" });
    expect(() => decoder.push(new Uint8Array())).toThrow(ProviderStreamError);
  });

  it("refuses JSON that is not a chunk, naming the field but not the value", () => {
    const error = failureOf(() =>
      decodeCompletionStream(bytesOf(sseEvent({ choices: "VALUE-MARKER" }))),
    );
    expect(error).toMatchObject({ failure: "malformed_json" });
    expect((error as Error).message).toContain("choices");
    expect((error as Error).message).not.toContain("VALUE-MARKER");
  });

  it("blanks the API key out of an endpoint's error message", () => {
    const error = failureOf(() =>
      decodeCompletionStream(bytesOf(sseEvent({ error: { message: "bad key sk-KEY-1" } })), {
        apiKey: "sk-KEY-1",
      }),
    );
    expect(error).toMatchObject({ failure: "error_event" });
    expect((error as Error).message).toContain("bad key [redacted]");
  });

  it("fails with no_finish_reason when the stream never says why it stopped", () => {
    const error = failureOf(() =>
      decodeCompletionStream(bytesOf(sseEvent(completionChunk({ content: "cut" })), SSE_DONE)),
    );
    expect(error).toMatchObject({ failure: "no_finish_reason" });
  });

  it("leaves usage null when the endpoint sent none, or only nulls", () => {
    const { summary } = decodeCompletionStream(
      bytesOf(
        sseEvent({ ...completionChunk({ content: "a" }, "stop"), usage: null }),
        sseEvent({ choices: [], usage: { prompt_tokens: null, completion_tokens: null } }),
      ),
    );
    expect(summary.usage).toBeNull();
  });
});

describe("CompletionStreamDecoder: the last event without its blank line", () => {
  const finalLine = `data: ${JSON.stringify(completionChunk({ content: "!" }, "stop"))}`;

  it.each(Object.entries(FINAL_TERMINATORS))(
    "keeps a final event terminated by %s, whole and split byte by byte",
    (_name, terminator) => {
      const text = sseEvent(completionChunk({ content: "Hi" })) + finalLine + terminator;
      const whole = decodeCompletionStream(bytesOf(text));
      expect(whole.summary).toMatchObject({ finish_reason: "stop", text: "Hi!" });
      const bytes = encoder.encode(text);
      const byByte = decodeCompletionStream([...bytes].map((byte) => Uint8Array.of(byte)));
      expect(byByte.summary).toMatchObject({ finish_reason: "stop", text: "Hi!" });
    },
  );

  it("still fails a stream whose unterminated last event was cut mid-JSON", () => {
    const cut = finalLine.slice(0, finalLine.length - 10);
    const error = failureOf(() =>
      decodeCompletionStream(bytesOf(sseEvent(completionChunk({ content: "Hi" })), cut)),
    );
    expect(error).toMatchObject({ failure: "no_finish_reason" });
  });
});

describe("CompletionStreamDecoder over arbitrary splits (property)", () => {
  const textPiece = fc.string({
    unit: fc.constantFrom("a", "Z", " ", "\n", '"', "\\", "é", "ß", "€", "😀", "🏰", "中"),
    minLength: 1,
    maxLength: 8,
  });
  const toolDelta = fc.record({
    index: fc.integer({ min: 0, max: 2 }),
    arguments: textPiece,
  });
  const streamEvents = fc
    .record({
      steps: fc.array(fc.oneof(textPiece, toolDelta), { maxLength: 12 }),
      withUsage: fc.boolean(),
      crlf: fc.boolean(),
    })
    .map(({ steps, withUsage, crlf }) => {
      const seen = new Set<number>();
      const expectedArguments = new Map<number, string>();
      let expectedText = "";
      const events = steps.map((step) => {
        if (typeof step === "string") {
          expectedText += step;
          return sseEvent(completionChunk({ content: step }));
        }
        const first = !seen.has(step.index);
        seen.add(step.index);
        expectedArguments.set(
          step.index,
          (expectedArguments.get(step.index) ?? "") + step.arguments,
        );
        return sseEvent(
          completionChunk({
            tool_calls: [
              {
                index: step.index,
                ...(first ? { id: `call_${step.index}`, type: "function" as const } : {}),
                function: {
                  ...(first ? { name: `tool_${step.index}` } : {}),
                  arguments: step.arguments,
                },
              },
            ],
          }),
        );
      });
      events.push(sseEvent(completionChunk({}, seen.size > 0 ? "tool_calls" : "stop")));
      if (withUsage) events.push(sseEvent(usageChunk({ prompt_tokens: 5, completion_tokens: 7 })));
      events.push(SSE_DONE);
      const text = events.join("");
      return {
        bytes: encoder.encode(crlf ? text.replaceAll("\n", "\r\n") : text),
        expectedText,
        expectedArguments: [...expectedArguments.entries()].sort(([left], [right]) => left - right),
      };
    });

  function split(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
    const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
    const pieces: Uint8Array[] = [];
    let start = 0;
    for (const offset of offsets) {
      pieces.push(bytes.subarray(start, offset));
      start = offset;
    }
    pieces.push(bytes.subarray(start));
    return pieces;
  }

  it("gives the same parts whole, in random splits, and byte by byte", () => {
    fc.assert(
      fc.property(
        streamEvents,
        fc.array(fc.nat(), { maxLength: 40 }),
        ({ bytes, expectedText, expectedArguments }, cuts) => {
          const whole = decodeCompletionStream([bytes]);
          const pieces = decodeCompletionStream(split(bytes, cuts));
          const byteByByte = decodeCompletionStream(
            Array.from(bytes, (_, offset) => bytes.subarray(offset, offset + 1)),
          );
          expect(pieces).toEqual(whole);
          expect(byteByByte).toEqual(whole);
          // And the parts say what was sent: the text, and each call's arguments by index.
          const texts = whole.parts.flatMap((part) =>
            part.type === "text-delta" ? [part.text] : [],
          );
          expect(texts.join("")).toBe(expectedText);
          const calls = whole.parts.flatMap((part) =>
            part.type === "tool-call" ? [[part.index, part.raw_arguments] as const] : [],
          );
          expect(calls).toEqual(expectedArguments);
        },
      ),
      { numRuns: 200 },
    );
  });
});
