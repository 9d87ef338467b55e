import { describe, expect, it } from "vitest";
import { parseJsonInput } from "./json-input.js";

describe("parseJsonInput", () => {
  it("gives the value when it has the expected shape", () => {
    expect(parseJsonInput('{ "title": "x" }', "object")).toEqual({ value: { title: "x" } });
    expect(parseJsonInput('[{ "name": "t" }]', "array")).toEqual({ value: [{ name: "t" }] });
  });

  it("says what is wrong otherwise: not JSON, or the other shape", () => {
    expect(parseJsonInput("{ not json", "object")).toEqual({
      error: expect.stringMatching(/^not valid JSON \(.+\)$/),
    });
    expect(parseJsonInput("[1]", "object")).toEqual({ error: "give a JSON object" });
    expect(parseJsonInput("null", "object")).toEqual({ error: "give a JSON object" });
    expect(parseJsonInput('{ "name": "t" }', "array")).toEqual({ error: "give a JSON array" });
  });
});
