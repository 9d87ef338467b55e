import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompletionChunk, isCommonChunk } from "./chunk-schema.js";

/** Chunk-like values, valid and not: every field may be missing, null, or of a wrong type. */
const maybe = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof(arbitrary, fc.constant(null), fc.constant(undefined), fc.jsonValue());
const toolCall = fc.record(
  {
    index: maybe(fc.integer({ min: -2, max: 5 })),
    id: maybe(fc.string()),
    type: maybe(fc.constant("function")),
    function: maybe(fc.record({ name: maybe(fc.string()), arguments: maybe(fc.string()) })),
  },
  { requiredKeys: [] },
);
const chunk = fc.record(
  {
    id: fc.string(),
    choices: maybe(
      fc.array(
        fc.record(
          {
            index: maybe(fc.integer({ min: -1, max: 2 })),
            delta: maybe(
              fc.record(
                {
                  role: maybe(fc.constant("assistant")),
                  content: maybe(fc.string()),
                  refusal: maybe(fc.string()),
                  reasoning_content: maybe(fc.string()),
                  reasoning: maybe(fc.string()),
                  tool_calls: maybe(fc.array(toolCall, { maxLength: 3 })),
                },
                { requiredKeys: [] },
              ),
            ),
            finish_reason: maybe(fc.constantFrom("stop", "tool_calls")),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 2 },
      ),
    ),
    usage: maybe(fc.record({ prompt_tokens: fc.nat() })),
    error: maybe(fc.string()),
  },
  { requiredKeys: [] },
);

describe("isCommonChunk, the decoder's fast path", () => {
  it("accepts only chunks the zod schema accepts, and reads them the same way", () => {
    fc.assert(
      fc.property(chunk, (generated) => {
        // What the decoder sees: values as JSON.parse builds them.
        const value: unknown = JSON.parse(JSON.stringify(generated));
        if (!isCommonChunk(value)) return;
        const parsed = CompletionChunk.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toStrictEqual(value);
      }),
      { numRuns: 3000 },
    );
  });

  it("takes the ordinary content and tool-call chunks, and leaves the rest to the schema", () => {
    expect(
      isCommonChunk({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] }),
    ).toBe(true);
    expect(
      isCommonChunk({
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "{" } }] } },
        ],
      }),
    ).toBe(true);
    // A thinking model's chunks and refusals stay on the fast path too.
    expect(
      isCommonChunk({ choices: [{ index: 0, delta: { content: null, reasoning_content: "h" } }] }),
    ).toBe(true);
    expect(isCommonChunk({ choices: [{ index: 0, delta: { reasoning: "h" } }] })).toBe(true);
    expect(isCommonChunk({ choices: [{ index: 0, delta: { refusal: "no" } }] })).toBe(true);
    expect(isCommonChunk({ choices: [], usage: { prompt_tokens: 1 } })).toBe(false);
    expect(isCommonChunk({ error: { message: "overloaded" } })).toBe(false);
    expect(
      isCommonChunk({ choices: [{ delta: { content: [{ type: "text", text: "a" }] } }] }),
    ).toBe(false);
    expect(isCommonChunk({ choices: [{ delta: { tool_calls: [{ index: -1 }] } }] })).toBe(false);
  });
});
