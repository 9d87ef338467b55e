import { describe, expect, it } from "vitest";
import { isWellFormedJson, toWellFormed } from "./json-limits.js";

describe("toWellFormed", () => {
  it("gives a value with nothing to repair back as it is", () => {
    const calls = [
      { id: "c1", name: "search", arguments: { query: "naïve ☃", n: [1, true, null] } },
    ];
    expect(toWellFormed(calls)).toBe(calls);
    expect(isWellFormedJson(calls)).toBe(true);
  });

  it("repairs lone surrogates in texts and keys into a copy, leaving the value as it was", () => {
    const value = { "k\ud800": ["ok", "bad \udc00"], nested: { text: "x\ud83d" } };
    const repaired = toWellFormed(value);
    expect(repaired).not.toBe(value);
    expect(repaired).toEqual({ "k\ufffd": ["ok", "bad \ufffd"], nested: { text: "x\ufffd" } });
    expect(Object.keys(value)[0]).toBe("k\ud800");
    expect(isWellFormedJson(value)).toBe(false);
  });

  it("copies what JSON would not write as it is, whatever its texts", () => {
    const date = new Date(0);
    const holder = { at: date };
    // A Date is not a plain object: the copy keeps its own fields only, as before.
    expect(isWellFormedJson(holder)).toBe(false);
    expect(toWellFormed(holder)).not.toBe(holder);
    const inherited = Object.create({ hidden: "from the prototype" }) as Record<string, unknown>;
    inherited.own = "mine";
    expect(isWellFormedJson({ inherited })).toBe(false);
    expect(JSON.stringify(toWellFormed({ inherited }))).toBe('{"inherited":{"own":"mine"}}');
    expect(isWellFormedJson([undefined])).toBe(false);
  });
});
