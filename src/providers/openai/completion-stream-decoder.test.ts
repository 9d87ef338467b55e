import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  completionChunk,
  FINAL_TERMINATORS,
  SSE_DONE,
  sseEvent,
  usageChunk,
} from "../../../test/fake-openai-server.js";
import { cutInto } from "../../../test/fixtures/provider-streams/index.js";
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

describe("CompletionStreamDecoder: reasoning, refusals and who answered", () => {
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it("turns every provider's reasoning field into reasoning deltas, never text", () => {
    const { parts, summary } = decodeCompletionStream(
      bytesOf(
        sseEvent(choice({ content: null, reasoning_content: "deep" })),
        sseEvent(choice({ reasoning: "seek" })),
        // A server sending both fields sends the same text twice: it counts once.
        sseEvent(choice({ reasoning_content: "once", reasoning: "once" })),
        sseEvent(
          choice({
            content: [
              { type: "thinking", thinking: [{ type: "text", text: "mis" }] },
              { type: "thinking", thinking: "tral" },
              { type: "text", text: "Answer" },
            ],
          }),
        ),
        sseEvent(choice({}, "stop")),
      ),
    );
    expect(parts).toEqual([
      { type: "reasoning-delta", text: "deep" },
      { type: "reasoning-delta", text: "seek" },
      { type: "reasoning-delta", text: "once" },
      { type: "reasoning-delta", text: "mistral" },
      { type: "text-delta", text: "Answer" },
    ]);
    expect(summary).toMatchObject({ text: "Answer", reasoning: "deepseekoncemistral" });
  });

  it("splits a leading <think> block out of the content, and releases a held prefix at the end", () => {
    const think = decodeCompletionStream(
      bytesOf(
        sseEvent(choice({ content: "<thi" })),
        sseEvent(choice({ content: "nk>plan</think>\n\nDone" })),
        sseEvent(choice({}, "stop")),
      ),
    );
    expect(think.parts).toEqual([
      { type: "reasoning-delta", text: "plan" },
      { type: "text-delta", text: "Done" },
    ]);
    const held = decodeCompletionStream(bytesOf(sseEvent(choice({ content: "<th" }, "stop"))));
    expect(held.parts).toEqual([{ type: "text-delta", text: "<th" }]);
    expect(held.summary.deltas).toEqual([{ type: "text-delta", text: "<th" }]);
  });

  it("counts reasoning as progress, so a thinking model is not idle", () => {
    const decoder = new CompletionStreamDecoder();
    decoder.push(encoder.encode(sseEvent(choice({ role: "assistant", content: "" }))));
    const before = decoder.progress;
    decoder.push(encoder.encode(sseEvent(choice({ reasoning_content: "hmm" }))));
    expect(decoder.progress).toBeGreaterThan(before);
  });

  it("keeps refusals out of the text", () => {
    const { parts, summary } = decodeCompletionStream(
      bytesOf(
        sseEvent(choice({ content: null, refusal: "" })),
        sseEvent(choice({ refusal: "I can't" })),
        sseEvent(choice({ refusal: " do that." }, "stop")),
      ),
    );
    expect(parts).toEqual([
      { type: "refusal-delta", text: "I can't" },
      { type: "refusal-delta", text: " do that." },
    ]);
    expect(summary).toMatchObject({ text: "", refusal: "I can't do that." });
  });

  it("reports the first id and model and the last fingerprint, cleaned and bounded", () => {
    const { summary } = decodeCompletionStream(
      bytesOf(
        sseEvent({ id: "", model: "", ...choice({ content: "a" }) }),
        sseEvent({
          id: "resp\u001b[31m-1",
          model: "served\nmodel",
          system_fingerprint: "fp_1",
          ...choice({}),
        }),
        sseEvent({ id: "resp-2", model: "other", system_fingerprint: null, ...choice({}) }),
        sseEvent({ system_fingerprint: `fp_${"9".repeat(900)}`, ...choice({}, "stop") }),
      ),
      { apiKey: "sk-ident-KEY" },
    );
    expect(summary.response_id).toBe("resp[31m-1");
    expect(summary.response_model).toBe("servedmodel");
    expect(summary.system_fingerprint?.length).toBeLessThanOrEqual(500);
    expect(summary.system_fingerprint?.startsWith("fp_999")).toBe(true);
    const keyed = decodeCompletionStream(
      bytesOf(sseEvent({ model: "echo sk-ident-KEY", ...choice({ content: "a" }, "stop") })),
      { apiKey: "sk-ident-KEY" },
    );
    expect(keyed.summary.response_model).not.toContain("sk-ident-KEY");
  });

  it("takes llama.cpp's timings as usage when it sent no usage object", () => {
    const { summary } = decodeCompletionStream(
      bytesOf(
        sseEvent(choice({ content: "hi" })),
        sseEvent({
          ...choice({}, "stop"),
          timings: { cache_n: 138, prompt_n: 1, predicted_n: 2 },
        }),
        SSE_DONE,
      ),
    );
    expect(summary.usage).toMatchObject({
      source: "provider_timings",
      usage: { prompt_tokens: 139, completion_tokens: 2, total_tokens: 141, cached_tokens: 138 },
    });
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

const BOM_BYTES = [0xef, 0xbb, 0xbf];

describe("CompletionStreamDecoder: bytes that are not plain UTF-8", () => {
  const chunkBytes = (content: Uint8Array) => {
    const [before, after] = sseEvent(completionChunk({ content: "\u0000" })).split("\\u0000");
    return new Uint8Array([...encoder.encode(before), ...content, ...encoder.encode(after)]);
  };
  // Truncated and overlong sequences, a surrogate, bytes that never start a character.
  const invalid = new Uint8Array([
    0x61, 0xc3, 0x28, 0xe2, 0x82, 0x62, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98, 0xc0, 0xaf, 0xff, 0xf0,
    0x9f, 0x98, 0x80, 0x7a,
  ]);

  it("replaces invalid UTF-8 exactly as WHATWG's decoder does, whatever the split", () => {
    const bytes = new Uint8Array([
      ...chunkBytes(invalid),
      ...encoder.encode(sseEvent(completionChunk({}, "stop")) + SSE_DONE),
    ]);
    const expected = new TextDecoder().decode(invalid);
    expect(expected).toContain("\ufffd");
    for (let cut = 0; cut <= bytes.length; cut++) {
      const { summary } = decodeCompletionStream([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(summary.text).toBe(expected);
    }
  });

  it("drops one leading byte order mark, even split across reads, and keeps a later one", () => {
    const events = encoder.encode(
      sseEvent(completionChunk({ content: "\ufeffhi" })) +
        sseEvent(completionChunk({}, "stop")) +
        SSE_DONE,
    );
    const bytes = new Uint8Array([...BOM_BYTES, ...events]);
    for (const cut of [0, 1, 2, 3, 4]) {
      const { summary } = decodeCompletionStream([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(summary.text).toBe("\ufeffhi");
      expect(summary.finish_reason).toBe("stop");
    }
    // A mark kept would make the first line's field `\ufeffdata`, and its chunk would be lost.
    // Only the stream's first character is a mark to drop: the one inside the content is text.
    expect(decodeCompletionStream([events]).summary.text).toBe("\ufeffhi");
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
  const reasoningPiece = fc.record({
    field: fc.constantFrom("reasoning_content", "reasoning", "thinking"),
    text: textPiece,
  });
  const streamEvents = fc
    .record({
      think: fc.option(fc.tuple(textPiece, fc.nat()), { nil: null }),
      steps: fc.array(fc.oneof(textPiece, toolDelta, reasoningPiece), { maxLength: 12 }),
      withUsage: fc.boolean(),
      crlf: fc.boolean(),
      bom: fc.boolean(),
    })
    .map(({ think, steps, withUsage, crlf, bom }) => {
      const seen = new Set<number>();
      const expectedArguments = new Map<number, string>();
      let expectedText = "";
      let expectedReasoning = "";
      const events: string[] = [];
      if (think !== null) {
        // A leading <think> block, its content events cut at an arbitrary point (even mid-tag).
        const [inside, cut] = think;
        const block = `<think>${inside}</think>`;
        const at = cut % (block.length + 1);
        for (const content of [block.slice(0, at), block.slice(at)]) {
          events.push(sseEvent(completionChunk({ content })));
        }
        expectedReasoning += inside;
      }
      let answerStarted = think === null;
      for (const step of steps) {
        if (typeof step === "string") {
          // After </think>, the answer's leading whitespace is dropped.
          const kept = answerStarted ? step : step.replace(/^\s+/, "");
          if (kept !== "") answerStarted = true;
          expectedText += kept;
          events.push(sseEvent(completionChunk({ content: step })));
          continue;
        }
        if ("field" in step) {
          expectedReasoning += step.text;
          const delta =
            step.field === "thinking"
              ? { content: [{ type: "thinking", thinking: [{ type: "text", text: step.text }] }] }
              : { [step.field]: step.text };
          events.push(sseEvent({ choices: [{ index: 0, delta }] }));
          continue;
        }
        const first = !seen.has(step.index);
        seen.add(step.index);
        expectedArguments.set(
          step.index,
          (expectedArguments.get(step.index) ?? "") + step.arguments,
        );
        events.push(
          sseEvent(
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
          ),
        );
      }
      events.push(sseEvent(completionChunk({}, seen.size > 0 ? "tool_calls" : "stop")));
      if (withUsage) events.push(sseEvent(usageChunk({ prompt_tokens: 5, completion_tokens: 7 })));
      events.push(SSE_DONE);
      const text = events.join("");
      // A byte order mark before the first event is dropped, as SSE says.
      const encoded = encoder.encode(crlf ? text.replaceAll("\n", "\r\n") : text);
      return {
        bytes: bom ? new Uint8Array([...BOM_BYTES, ...encoded]) : encoded,
        expectedText,
        expectedReasoning,
        expectedArguments: [...expectedArguments.entries()].sort(([left], [right]) => left - right),
      };
    });

  it("gives the same parts whole, in random splits, and byte by byte", () => {
    fc.assert(
      fc.property(
        streamEvents,
        fc.array(fc.nat(), { maxLength: 40 }),
        ({ bytes, expectedText, expectedReasoning, expectedArguments }, cuts) => {
          const whole = decodeCompletionStream([bytes]);
          const pieces = decodeCompletionStream(cutInto(bytes, cuts));
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
          const reasoning = whole.parts.flatMap((part) =>
            part.type === "reasoning-delta" ? [part.text] : [],
          );
          expect(reasoning.join("")).toBe(expectedReasoning);
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
