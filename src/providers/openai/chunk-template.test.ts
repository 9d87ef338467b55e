import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cutInto, loadProviderFixtures } from "../../../test/fixtures/provider-streams/index.js";
import { CompletionStreamDecoder, decodeCompletionStream } from "./completion-stream-decoder.js";

/**
 * Reading a chunk through a template (chunk-template.ts) must give what parsing it gives: every
 * stream below is decoded both ways and the parts, the summary, or the failure compared.
 */

const encoder = new TextEncoder();
const ids = (index: number) => `call_fixed_${index}`;

/** Each push's parts and progress, then the summary or the failure. */
function decodeBothWays(pieces: Uint8Array[]) {
  const outcome = (reuseChunkText: boolean) => {
    const decoder = new CompletionStreamDecoder({ reuseChunkText, createToolCallId: ids });
    const pushes: unknown[] = [];
    try {
      for (const bytes of pieces) {
        pushes.push({ parts: decoder.push(bytes), progress: decoder.progress });
        if (decoder.finished) break;
      }
      return { pushes, summary: decoder.end(), progress: decoder.progress };
    } catch (error) {
      return { pushes, failed: String(error), reason: (error as { failure?: unknown }).failure };
    }
  };
  return { templated: outcome(true), parsed: outcome(false) };
}

/** An SSE event whose data is `json`; a JSON text with line breaks becomes several data lines. */
const event = (json: string) =>
  `${json
    .split("\n")
    .map((line) => `data: ${line}`)
    .join("\n")}\n\n`;

/** The chunk that ends a stream. */
const finishChunk = (reason = "stop") =>
  JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });

// Every character class the cut-out strings must handle: escapes, raw controls, quotes, astral
// characters, the probe text itself. Most strings a stream carries have no escape, so most here
// have none either, or the template would seldom be tried.
const plainUnits = ["a", " ", "é", "😀", "\u2028", "/", "agent-lab\u00a0delta\u00a0probe"];
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom(...plainUnits), maxLength: 6 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.constantFrom(
        ...plainUnits,
        '"',
        "\\",
        "\n",
        "\u0001",
        "agent-lab\u00a0padding\u00a0probe",
      ),
      maxLength: 6,
    }),
  },
);

const delta = fc.oneof(
  { weight: 12, arbitrary: piece.map((content) => ({ content })) },
  { weight: 2, arbitrary: piece.map((content) => ({ role: "assistant", content })) },
  { weight: 2, arbitrary: piece.map((text) => ({ content: null, reasoning_content: text })) },
  { weight: 1, arbitrary: piece.map((text) => ({ reasoning: text })) },
  { weight: 1, arbitrary: fc.tuple(piece, piece).map(([a, b]) => ({ content: a, reasoning: b })) },
  { weight: 1, arbitrary: piece.map((refusal) => ({ refusal })) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(piece, fc.constantFrom(0, 1), fc.constantFrom("plain", "named", "null", "two"))
      .map(([text, index, form]) => ({
        ...(form === "null" ? { content: null } : {}),
        tool_calls: [
          {
            index,
            ...(form === "named" ? { id: "call_1", type: "function" } : {}),
            function: { ...(form === "named" ? { name: "f" } : {}), arguments: text },
          },
          ...(form === "two" ? [{ index: 2, function: { arguments: "x" } }] : []),
        ],
      })),
  },
  { weight: 1, arbitrary: fc.constant({}) },
);

/**
 * A stream's envelopes: a few, so that chunks share one as a real stream's do (a template is
 * made of one chunk and read with on the next ones), each sometimes changed, spaced or odd.
 */
const often = <T>(usual: T, ...odd: T[]) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(usual) }, fc.constantFrom(...odd));
const plainEnvelope = fc.record({
  id: fc.constantFrom("chatcmpl-a", "chatcmpl-b"),
  created: fc.constantFrom(1, 2),
  fingerprint: fc.constantFrom(undefined, "fp_1", "fp_2"),
  padded: fc.boolean(),
  index: fc.constant<number | null>(0),
  finish: fc.constant<string | null>(null),
  usage: fc.constant<object | null | undefined>(undefined),
  spaced: fc.constant(false),
  contentOnTop: fc.constant(false),
  timings: fc.constant<object | undefined>(undefined),
});
const envelope = fc.oneof(
  { weight: 2, arbitrary: plainEnvelope },
  fc.record({
    id: fc.constantFrom("chatcmpl-a", "chatcmpl-b"),
    created: fc.constantFrom(1, 2),
    fingerprint: fc.constantFrom(undefined, "fp_1", "fp_2"),
    padded: fc.boolean(),
    index: often<number | null>(0, 1, null),
    finish: often<string | null>(null, "stop"),
    usage: often<object | null | undefined>(undefined, null, { prompt_tokens: 3 }),
    spaced: often(false, true),
    contentOnTop: often(false, true),
    // llama.cpp's figures, which the decoder reads from any chunk.
    timings: often<object | undefined>(undefined, { predicted_n: 2 }),
  }),
);

/** One chunk's JSON text: an envelope of the stream's, a delta, padding, odd keys or trailers. */
const chunkText = (envelopes: fc.Arbitrary<Envelope>) =>
  fc
    .record({
      envelope: envelopes,
      delta,
      padding: piece,
      duplicate: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, piece),
      trailer: often("", " ", "}", "x"),
    })
    .map(({ envelope: shell, delta: chunkDelta, padding, duplicate, trailer }) => {
      const value: Record<string, unknown> = {
        id: shell.id,
        object: "chat.completion.chunk",
        created: shell.created,
        model: "m",
        ...(shell.fingerprint === undefined ? {} : { system_fingerprint: shell.fingerprint }),
        ...(shell.contentOnTop ? { content: "top" } : {}),
        choices: [{ index: shell.index, delta: chunkDelta, finish_reason: shell.finish }],
        ...(shell.usage === undefined ? {} : { usage: shell.usage }),
        ...(shell.timings === undefined ? {} : { timings: shell.timings }),
        ...(shell.padded ? { obfuscation: padding } : {}),
      };
      let text = shell.spaced ? JSON.stringify(value, null, 1) : JSON.stringify(value);
      // A repeated key: JSON.parse keeps the last, so must a template.
      if (duplicate !== undefined) {
        text = text.replace('"delta":{', `"delta":{"content":${JSON.stringify(duplicate)},`);
      }
      return text + trailer;
    });

type Envelope = typeof envelope extends fc.Arbitrary<infer T> ? T : never;

const stream = fc.array(envelope, { minLength: 1, maxLength: 3 }).chain((envelopes) =>
  fc.array(chunkText(fc.constantFrom(...envelopes)), {
    minLength: 4,
    maxLength: 30,
    size: "large",
  }),
);

describe("chunk templates", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("give the parts, summary or failure that parsing every chunk gives (property)", () => {
    fc.assert(
      fc.property(
        stream,
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        (chunks, done, cuts) => {
          const text =
            [...chunks, finishChunk()].map(event).join("") + (done ? "data: [DONE]\n\n" : "");
          const bytes = encoder.encode(text);
          const whole = decodeBothWays([bytes]);
          expect(whole.templated).toEqual(whole.parsed);
          const pieces = decodeBothWays(cutInto(bytes, cuts));
          expect(pieces.templated).toEqual(pieces.parsed);
        },
      ),
      { numRuns: Number(process.env.AGENT_LAB_PROPERTY_RUNS ?? 1000) },
    );
  });

  it("give every recorded provider stream the same parts and summary", () => {
    for (const fixture of loadProviderFixtures()) {
      const both = decodeBothWays([encoder.encode(fixture.sse)]);
      expect(both.templated, fixture.name).toEqual(both.parsed);
    }
  });

  it("keep the last fingerprint and llama.cpp figures of a chunk read between two of theirs", () => {
    const chunk = (delta: object, extra: object) =>
      JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta }], ...extra });
    const mine = { system_fingerprint: "fp_1", timings: { predicted_n: 2, prompt_n: 1 } };
    const other = { system_fingerprint: "fp_2", timings: { predicted_n: 9, prompt_n: 9 } };
    const toolCall = {
      tool_calls: [{ index: 0, id: "t", function: { name: "f", arguments: "" } }],
    };
    for (const extra of [{ system_fingerprint: "fp_1" }, mine]) {
      const otherExtra = "timings" in extra ? other : { system_fingerprint: "fp_2" };
      const text = [
        chunk({ content: "a" }, extra),
        chunk({ content: "b" }, extra),
        chunk(toolCall, otherExtra),
        chunk({ content: "c" }, extra),
        finishChunk(),
      ]
        .map(event)
        .join("");
      const both = decodeBothWays([encoder.encode(text)]);
      expect(both.templated).toEqual(both.parsed);
      const summary = (both.parsed as { summary: { system_fingerprint: string } }).summary;
      expect(summary.system_fingerprint).toBe("fp_1");
    }
  });

  it("are not made where the probe's own text already stands", () => {
    // Were the top-level "content" taken for the delta's, the probe would seem to confirm it.
    const probeText = "agent-lab\u00a0delta\u00a0probe";
    const chunk = JSON.stringify({
      content: "top",
      choices: [{ index: 0, delta: { content: probeText } }],
    });
    const both = decodeBothWays([
      encoder.encode([chunk, chunk, finishChunk()].map(event).join("")),
    ]);
    expect(both.templated).toEqual(both.parsed);
    expect((both.parsed as { summary: { text: string } }).summary.text).toBe(probeText.repeat(2));
  });

  /** A stream of `chunks` and a finish chunk, decoded while counting the JSON.parse calls. */
  function parsesOf(chunks: string[], reason = "stop") {
    const parse = vi.spyOn(JSON, "parse");
    const text = [...chunks, finishChunk(reason)].map(event).join("");
    const { summary } = decodeCompletionStream([encoder.encode(`${text}data: [DONE]\n\n`)]);
    const parses = parse.mock.calls.length;
    parse.mockRestore();
    expect(summary.finish_reason).toBe(reason);
    return { parses, summary };
  }

  const contentChunk = (content: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      model: "m",
      choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
      ...extra,
    });

  it("are what most chunks are read with: a role chunk, then content, parse a handful of chunks", () => {
    const chunks = [
      JSON.stringify({
        id: "c",
        choices: [{ index: 0, delta: { role: "assistant", content: "" } }],
      }),
      ...Array.from({ length: 200 }, (_, index) => contentChunk(`word${index} `)),
    ];
    // The role chunk, the first content chunk, each one's check, the finish chunk.
    expect(parsesOf(chunks).parses).toBeLessThanOrEqual(6);
  });

  it("read OpenAI's padded chunks, whose padding differs every time, as fast", () => {
    const chunks = Array.from({ length: 200 }, (_, index) =>
      contentChunk(`w${index}`, { obfuscation: `pad${index % 7}x` }),
    );
    expect(parsesOf(chunks).parses).toBeLessThanOrEqual(4);
  });

  it("keep their template over a chunk with an escape, which alone is parsed", () => {
    const chunks = Array.from({ length: 200 }, (_, index) =>
      contentChunk(index % 20 === 5 ? 'line\n"quoted"' : `w${index}`),
    );
    // Ten chunks with escapes, the first chunk and its check, the finish chunk.
    expect(parsesOf(chunks).parses).toBeLessThanOrEqual(14);
  });

  it("read a tool call's argument deltas as they read content", () => {
    const chunks = [
      JSON.stringify({
        id: "c",
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: "call_1",
                  type: "function",
                  function: { name: "f", arguments: "" },
                },
              ],
            },
          },
        ],
      }),
      ...Array.from({ length: 200 }, (_, index) =>
        JSON.stringify({
          id: "c",
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { arguments: `a${index}` } }] },
            },
          ],
        }),
      ),
    ];
    const { parses, summary } = parsesOf(chunks, "tool_calls");
    expect(parses).toBeLessThanOrEqual(6);
    expect(summary.tool_calls).toMatchObject([
      {
        id: "call_1",
        name: "f",
        raw_arguments: Array.from({ length: 200 }, (_, i) => `a${i}`).join(""),
      },
    ]);
  });

  it("stop being tried for a stream whose cuts are never found (repeated keys)", () => {
    // The reviewer's case: every trial parse fails, as the slot comes after repeats of its key.
    const chunks = Array.from(
      { length: 200 },
      (_, index) =>
        `{"choices":[{"index":0,"delta":{"content":"a","content":"b","content":"w${index}"}}],"obfuscation":"1","obfuscation":"p${index}"}`,
    );
    // Each chunk parsed once; a few rounds of at most two trial parses, then no more.
    expect(parsesOf(chunks).parses).toBeLessThanOrEqual(201 + 4 * 2);
  });

  it("stop being made for a stream whose every chunk differs (a timestamp per chunk)", () => {
    const chunks = Array.from({ length: 200 }, (_, index) =>
      contentChunk(`w${index}`, { created: 1_700_000_000 + index }),
    );
    // Each chunk parsed once; a few trial templates, each one extra parse, then no more.
    expect(parsesOf(chunks).parses).toBeLessThanOrEqual(201 + 4);
  });
});
