import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { blockYaml } from "./block-yaml.js";

describe("blockYaml", () => {
  it("writes any JSON value so that YAML reads the same value back", () => {
    fc.assert(
      fc.property(fc.jsonValue({ noUnicodeString: false }), (value) => {
        // JSON itself cannot tell -0 from 0; neither can the files this writes.
        const json = JSON.parse(JSON.stringify(value)) as unknown;
        expect(parse(blockYaml(json))).toEqual(json);
      }),
      { numRuns: 500 },
    );
  });

  it("quotes strings that would read as something else, and leaves prose plain", () => {
    const text = blockYaml({
      plain: "Find a hotel in Berlin, for tonight.",
      words: [
        "yes",
        "No",
        "null",
        "true",
        "10",
        "1.5",
        "a: b",
        "a #b",
        "- x",
        "",
        " lead",
        "trail ",
      ],
      multi: "two\nlines",
      nested: [{ a: 1, b: [[]] }, [1, [2]], {}],
    });
    expect(text).toBe(
      [
        "plain: Find a hotel in Berlin, for tonight.",
        "words:",
        '  - "yes"',
        '  - "No"',
        '  - "null"',
        '  - "true"',
        '  - "10"',
        '  - "1.5"',
        '  - "a: b"',
        '  - "a #b"',
        '  - "- x"',
        '  - ""',
        '  - " lead"',
        '  - "trail "',
        'multi: "two\\nlines"',
        "nested:",
        "  - a: 1",
        "    b:",
        "      - []",
        "  - - 1",
        "    - - 2",
        "  - {}",
        "",
      ].join("\n"),
    );
  });
});
