import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutInto } from "../../../test/fixtures/provider-streams/index.js";
import { ThinkTagSplitter } from "./think-tag-splitter.js";

/** A leading `<think>` block split from the answer, whatever the chunking. */

function split(pieces: readonly string[]): { reasoning: string; text: string; emitted: string[] } {
  const splitter = new ThinkTagSplitter();
  let reasoning = "";
  let text = "";
  const emitted: string[] = [];
  for (const piece of [...pieces.map((p) => splitter.push(p)), splitter.end()]) {
    reasoning += piece.reasoning;
    text += piece.text;
    emitted.push(piece.text);
  }
  return { reasoning, text, emitted };
}

describe("ThinkTagSplitter", () => {
  it("splits a leading block, tags cut mid-tag, and drops the whitespace before the answer", () => {
    expect(split(["<thi", "nk>\nstep 1", ".</th", "ink>", "\n\nAns", "wer"])).toMatchObject({
      reasoning: "\nstep 1.",
      text: "Answer",
    });
    expect(split(["  <think>a</think>b"])).toMatchObject({ reasoning: "a", text: "b" });
  });

  it("does not hold back ordinary text past the point it could be a tag", () => {
    const splitter = new ThinkTagSplitter();
    expect(splitter.push("Hello")).toEqual({ reasoning: "", text: "Hello" });
    expect(splitter.push("<think>later</think>")).toEqual({
      reasoning: "",
      text: "<think>later</think>",
    });
    const other = new ThinkTagSplitter();
    expect(other.push("<")).toEqual({ reasoning: "", text: "" });
    expect(other.push("b>bold")).toEqual({ reasoning: "", text: "<b>bold" });
  });

  it("streams reasoning as it comes, holding only a possible closing tag", () => {
    const splitter = new ThinkTagSplitter();
    expect(splitter.push("<think>one")).toEqual({ reasoning: "one", text: "" });
    expect(splitter.push(" two </")).toEqual({ reasoning: " two ", text: "" });
    expect(splitter.push("b>")).toEqual({ reasoning: "</b>", text: "" });
  });

  it("treats an unclosed block at the end as reasoning, and a lone tag prefix as text", () => {
    expect(split(["<think>cut off mid-thou", "ght </thi"])).toEqual({
      reasoning: "cut off mid-thought </thi",
      text: "",
      emitted: ["", "", ""],
    });
    expect(split(["<thi"]).text).toBe("<thi");
    expect(split(["<think>x</think>", "   "]).text).toBe("");
  });

  it("gives the same reasoning and answer for any chunking (property)", () => {
    const piece = fc.string({ unit: fc.constantFrom("a", " ", "\n", "<", ">", "/", "é", "😀") });
    fc.assert(
      fc.property(
        fc.boolean(),
        piece,
        piece,
        fc.array(fc.nat(), { maxLength: 10 }),
        (withBlock, inside, answer, cuts) => {
          const cleanInside = inside.replaceAll("</think>", "");
          const cleanAnswer = answer.replace(/^\s+/, "");
          const whole = withBlock ? `<think>${cleanInside}</think>\n${cleanAnswer}` : cleanAnswer;
          const pieces = cutInto(whole, cuts);
          const result = split(pieces);
          const expected = split([whole]);
          expect(result.reasoning).toBe(expected.reasoning);
          expect(result.text).toBe(expected.text);
          if (withBlock) {
            expect(result.reasoning).toBe(cleanInside);
            expect(result.text).toBe(cleanAnswer);
          } else {
            expect(result.text).toBe(whole);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
