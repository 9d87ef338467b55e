import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatEventTag } from "../../domain/event-protocol.js";
import { EventTagParser, MAX_OPENING_TAG_LENGTH, type ParsedPiece } from "./event-tag-parser.js";

// ---------------------------------------------------------------------------------------------
// An independent whole-string reference: regexes over the complete text, no streaming.

const OPENING_TAG =
  /<event[ \t\r\n]+name[ \t\r\n]*=[ \t\r\n]*(?:"([^"<\r\n]+)"|'([^'<\r\n]+)')[ \t\r\n]*>/y;
const CLOSE_TAG = "</event>";
const ENTITIES: Record<string, string> = {
  quot: '"',
  amp: "&",
  apos: "'",
  "#39": "'",
  lt: "<",
  gt: ">",
};
const unescapeName = (value: string) =>
  value.replace(/&(quot|amp|apos|#39|lt|gt);/g, (_, entity: string) => ENTITIES[entity] ?? "");

/** The opening tag that starts at `start`, if any. */
function openingTagAt(text: string, start: number): { name: string; length: number } | null {
  OPENING_TAG.lastIndex = start;
  const match = OPENING_TAG.exec(text);
  if (!match || match[0].length > MAX_OPENING_TAG_LENGTH) return null;
  return { name: unescapeName(match[1] ?? match[2] ?? ""), length: match[0].length };
}

function reference(stream: string): ParsedPiece[] {
  const pieces: ParsedPiece[] = [];
  let position = 0;
  let search = 0;
  for (;;) {
    const start = stream.indexOf("<", search);
    if (start === -1) break;
    const tag = openingTagAt(stream, start);
    if (!tag) {
      search = start + 1;
      continue;
    }
    pieces.push({ type: "text", text: stream.slice(position, start) });
    const inside = start + tag.length;
    const close = stream.indexOf(CLOSE_TAG, inside);
    const complete = close !== -1;
    const raw = complete ? stream.slice(inside, close) : stream.slice(inside);
    pieces.push({ type: "event", name: tag.name, raw_arguments: raw.trim(), complete });
    if (!complete) return normalize(pieces);
    position = close + CLOSE_TAG.length;
    search = position;
  }
  pieces.push({ type: "text", text: stream.slice(position) });
  return normalize(pieces);
}

/** Could `suffix` (which starts with `<`) still grow into an opening tag? */
function couldBecomeTag(suffix: string): boolean {
  const completions = ['<event name="x">', "<event name='x'>"].flatMap((tag) =>
    [...tag].map((_, index) => tag.slice(index)),
  );
  return completions.some((completion) => {
    const candidate = suffix + completion;
    return openingTagAt(candidate, 0)?.length === candidate.length;
  });
}

/** What a parser may have released after seeing only `prefix`: the held-back part removed. */
function releasedAfter(prefix: string): ParsedPiece[] {
  const pieces = reference(prefix);
  const last = pieces.at(-1);
  if (last?.type === "event" && !last.complete) return pieces.slice(0, -1);
  if (last?.type === "text") {
    const start = last.text.lastIndexOf("<");
    if (start !== -1 && couldBecomeTag(last.text.slice(start))) {
      return normalize([...pieces.slice(0, -1), { type: "text", text: last.text.slice(0, start) }]);
    }
  }
  return pieces;
}

// ---------------------------------------------------------------------------------------------
// Feeding helpers.

/** Merges adjacent text pieces and drops empty ones. */
function normalize(pieces: readonly ParsedPiece[]): ParsedPiece[] {
  const merged: ParsedPiece[] = [];
  for (const piece of pieces) {
    const previous = merged.at(-1);
    if (piece.type === "text" && piece.text === "") continue;
    if (piece.type === "text" && previous?.type === "text") previous.text += piece.text;
    else merged.push({ ...piece });
  }
  return merged;
}

function chunksAt(stream: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let previous = 0;
  for (const point of [...points, stream.length]) {
    chunks.push(stream.slice(previous, point));
    previous = point;
  }
  return chunks;
}

/** Feeds the chunks; after every push checks that exactly the releasable pieces came out. */
function feedChecked(chunks: readonly string[]): ParsedPiece[] {
  const parser = new EventTagParser();
  const released: ParsedPiece[] = [];
  let prefix = "";
  for (const chunk of chunks) {
    const pieces = parser.push(chunk);
    for (const piece of pieces) if (piece.type === "text") expect(piece.text).not.toBe("");
    released.push(...pieces);
    prefix += chunk;
    expect(normalize(released), `after ${JSON.stringify(prefix)}`).toEqual(releasedAfter(prefix));
  }
  released.push(...parser.end());
  return normalize(released);
}

function feed(chunks: readonly string[]): ParsedPiece[] {
  const parser = new EventTagParser();
  return normalize([...chunks.flatMap((chunk) => parser.push(chunk)), ...parser.end()]);
}

const text = (value: string): ParsedPiece => ({ type: "text", text: value });
const event = (name: string, raw_arguments: string, complete = true): ParsedPiece => ({
  type: "event",
  name,
  raw_arguments,
  complete,
});

// ---------------------------------------------------------------------------------------------

const maximalTag = (extra: number) => {
  const bare = '<event name="">'.length;
  return `<event name="${"n".repeat(MAX_OPENING_TAG_LENGTH - bare + extra)}">{}</event>`;
};

const REPRESENTATIVE: Array<{ title: string; stream: string; expected: ParsedPiece[] }> = [
  {
    title: "text only",
    stream: "Hello, world! 2 > 1 and no tags here.\nSecond line.",
    expected: [text("Hello, world! 2 > 1 and no tags here.\nSecond line.")],
  },
  {
    title: "one event mid-text",
    stream: 'Let me look that up. <event name="search">{"query":"cats"}</event> Done.',
    expected: [text("Let me look that up. "), event("search", '{"query":"cats"}'), text(" Done.")],
  },
  {
    title: "two events back-to-back",
    stream: '<event name="a">{"x":1}</event><event name="b">{"y":2}</event>',
    expected: [event("a", '{"x":1}'), event("b", '{"y":2}')],
  },
  {
    title: "events with text between them and around them",
    stream: 'A<event name="a">{}</event>B\n<event name="b">[]</event>C',
    expected: [text("A"), event("a", "{}"), text("B\n"), event("b", "[]"), text("C")],
  },
  {
    title: "escaped name (formatEventTag)",
    stream: `x ${formatEventTag('say "hi" & go', '{"a":1}')} ${formatEventTag("&quot;", "{}")}`,
    expected: [text("x "), event('say "hi" & go', '{"a":1}'), text(" "), event("&quot;", "{}")],
  },
  {
    title: "single quotes and extra whitespace",
    stream: "<event  name = 'lookup' >{}</event><event\n\tname=\"b\"\n>{}</event>",
    expected: [event("lookup", "{}"), event("b", "{}")],
  },
  {
    title: "arguments containing < and > and near-closings",
    stream:
      '<event name="cmp">{"q":"a<b && c>d","html":"<p></p></even></Event></event >"}</event>' +
      '<event name="lt">x<</event>',
    expected: [
      event("cmp", '{"q":"a<b && c>d","html":"<p></p></even></Event></event >"}'),
      event("lt", "x<"),
    ],
  },
  {
    title: "arguments trimmed, inside kept verbatim; empty arguments",
    stream: '<event name="x">\n  { "a" :  1 }\n\n</event><event name="y"></event>',
    expected: [event("x", '{ "a" :  1 }'), event("y", "")],
  },
  {
    title: "malformed look-alikes are text",
    stream:
      '<events> <event> <eventually <event name=""> <event name=x> <event nam="x"> ' +
      '<Event name="x"> <event name="a\nb"> <event name="a<b"> <event name="x"y> <<event </event>',
    expected: [
      text(
        '<events> <event> <eventually <event name=""> <event name=x> <event nam="x"> ' +
          '<Event name="x"> <event name="a\nb"> <event name="a<b"> <event name="x"y> <<event </event>',
      ),
    ],
  },
  {
    title: "a look-alike right before a real tag",
    stream: '<event name="a<event name="b">{}</event>',
    expected: [text('<event name="a'), event("b", "{}")],
  },
  {
    title: "opening tag at the length limit is a tag, one longer is text",
    stream: `${maximalTag(0)}|${maximalTag(1)}`,
    expected: [event("n".repeat(MAX_OPENING_TAG_LENGTH - 15), "{}"), text(`|${maximalTag(1)}`)],
  },
  {
    title: "a whitespace run past the length limit is text",
    stream: `<event${" ".repeat(MAX_OPENING_TAG_LENGTH)}name="x">{}</event>`,
    expected: [text(`<event${" ".repeat(MAX_OPENING_TAG_LENGTH)}name="x">{}</event>`)],
  },
  {
    title: "unclosed tag at the end",
    stream: 'Sure. <event name="search">{"query": "ca',
    expected: [text("Sure. "), event("search", '{"query": "ca', false)],
  },
  {
    title: "unclosed tag cut inside its closing tag",
    stream: '<event name="search">{} </eve',
    expected: [event("search", "{} </eve", false)],
  },
  {
    title: "opening tag cut before its >",
    stream: 'Hi <event name="search"',
    expected: [text('Hi <event name="search"')],
  },
  {
    title: "< at the very end",
    stream: "a < b <",
    expected: [text("a < b <")],
  },
];

describe("EventTagParser on representative streams", () => {
  for (const { title, stream, expected } of REPRESENTATIVE) {
    describe(title, () => {
      it("fed whole, matches the expectation and the reference", () => {
        expect(feed([stream])).toEqual(expected);
        expect(reference(stream)).toEqual(expected);
        expect(feedChecked([stream])).toEqual(expected);
      });

      it("split at every single point", () => {
        for (let cut = 0; cut <= stream.length; cut += 1) {
          expect(feedChecked([stream.slice(0, cut), stream.slice(cut)]), `cut ${cut}`).toEqual(
            expected,
          );
        }
      });

      it("fed character by character", () => {
        expect(feedChecked([...stream.split("")])).toEqual(expected);
      });

      it("split at random points", () => {
        fc.assert(
          fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
            expect(feedChecked(chunksAt(stream, cuts))).toEqual(expected);
          }),
          { numRuns: 150 },
        );
      });
    });
  }
});

describe("EventTagParser on generated streams", () => {
  const token = fc.constantFrom(
    '<event name="a">',
    "<event name='b' >",
    '<event  name = "c&amp;&quot;d">',
    '<event name="">',
    "</event>",
    "</eve",
    "nt>",
    "<event",
    "<",
    ">",
    " name=",
    '"q"',
    "<events>",
    '{"k":"<v>"}',
    "text ",
    "\n",
    " ",
  );
  const stream = fc.array(token, { maxLength: 14 }).map((tokens) => tokens.join(""));

  it("agree with the reference, and release exactly what is releasable, however split", () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 10 }), (input, cuts) => {
        expect(feedChecked(chunksAt(input, cuts))).toEqual(reference(input));
      }),
      { numRuns: 400 },
    );
  });

  it("recover the events and text formatEventTag wrote, however split", () => {
    const plainText = fc
      .string({ unit: fc.constantFrom("a", " ", "\n", "<", ">", "e", "v", "/", '"', "é", "😀") })
      .filter((value) => !value.includes("<event"));
    const name = fc
      .string({ unit: fc.constantFrom("a", "_", ".", '"', "'", "&", ">", " ", "q"), minLength: 1 })
      .filter((value) => value.length <= 100);
    const rawArguments = fc
      .string({ unit: fc.constantFrom("{", "}", '"', "<", ">", "/", "e", "x", ":", "1") })
      .map((value) => value.trim())
      .filter((value) => !value.includes(CLOSE_TAG));
    const part = fc.oneof(
      plainText.map((value) => text(value)),
      fc.record({ name, rawArguments }).map((value) => event(value.name, value.rawArguments)),
    );
    fc.assert(
      fc.property(
        fc.array(part, { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (parts, cuts) => {
          // A text ending in `<`, `<e`, … followed by a tag stays text: `<` cannot be in a tag.
          const input = parts
            .map((piece) =>
              piece.type === "text" ? piece.text : formatEventTag(piece.name, piece.raw_arguments),
            )
            .join("");
          expect(feed(chunksAt(input, cuts))).toEqual(normalize(parts));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("EventTagParser timing of releases", () => {
  it("returns an event from the push that delivers the final > of </event>", () => {
    const stream =
      'Checking. <event name="search">{"q":"x"}</event> then <event name="b">{}</event>';
    const parser = new EventTagParser();
    const seen: Array<{ at: number; piece: ParsedPiece }> = [];
    [...stream].forEach((char, at) => {
      for (const piece of parser.push(char)) seen.push({ at, piece });
    });
    const closings = [...stream.matchAll(/<\/event>/g)].map((match) => (match.index ?? 0) + 7);
    expect(seen.filter(({ piece }) => piece.type === "event").map(({ at }) => at)).toEqual(
      closings,
    );
    expect(parser.end()).toEqual([]);
  });

  it("releases text before a tag before the tag closes", () => {
    const parser = new EventTagParser();
    expect(parser.push("Hello <ev")).toEqual([text("Hello ")]);
    expect(parser.push('ent name="search"')).toEqual([]);
    expect(parser.push(" >{")).toEqual([]);
    expect(parser.push('"q":1}</event')).toEqual([]);
    expect(parser.push("> bye")).toEqual([event("search", '{"q":1}'), text(" bye")]);
    expect(parser.end()).toEqual([]);
  });

  it("releases a look-alike as soon as it stops looking like a tag", () => {
    const parser = new EventTagParser();
    expect(parser.push("a <event")).toEqual([text("a ")]);
    expect(parser.push("s")).toEqual([text("<events")]);
    expect(parser.push(" <")).toEqual([text(" ")]);
    expect(parser.push("<")).toEqual([text("<")]);
    expect(parser.end()).toEqual([text("<")]);
  });

  it("is ready for a new stream after end()", () => {
    const parser = new EventTagParser();
    expect(parser.end()).toEqual([]);
    expect(parser.push('<event name="a">{')).toEqual([]);
    expect(parser.end()).toEqual([event("a", "{", false)]);
    expect(parser.push("plain")).toEqual([text("plain")]);
    expect(parser.end()).toEqual([]);
  });
});

describe("EventTagParser work stays linear", () => {
  const size = 200_000;

  it("passes 200k characters without < through, one-character deltas, each at once", () => {
    const parser = new EventTagParser();
    const input = "abcdefghij".repeat(size / 10);
    let output = "";
    for (const char of input) {
      const pieces = parser.push(char);
      expect(pieces.length).toBe(1);
      output += pieces[0]?.type === "text" ? pieces[0].text : "";
    }
    expect(parser.end()).toEqual([]);
    expect(output).toBe(input);
  });

  it("accumulates 200k characters of arguments in one-character deltas", () => {
    const parser = new EventTagParser();
    const inside = `{"data":"${"x<y/z>".repeat(size / 6)}"}`;
    const pieces: ParsedPiece[] = [];
    for (const char of `<event name="big">${inside}</event>`) pieces.push(...parser.push(char));
    expect(pieces).toEqual([event("big", inside)]);
  });

  it("passes 200k characters of < and near-tags through", () => {
    const input = "<".repeat(size / 2) + "<even <event name=x ".repeat(size / 40);
    const parser = new EventTagParser();
    const pieces = [...[...input].flatMap((char) => parser.push(char)), ...parser.end()];
    expect(normalize(pieces)).toEqual([text(input)]);
  });
});
