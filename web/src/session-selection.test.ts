import { describe, expect, it } from "vitest";
import { pickedIds, togglePick } from "./session-selection.js";

const a = { id: "a", title: "A" };
const b = { id: "b", title: "B" };
const c = { id: "c", title: "C" };

describe("the sessions picked for comparison", () => {
  it("adds picks in order, a third replacing the oldest", () => {
    const two = togglePick(togglePick([], a, true), b, true);
    expect(two).toEqual([a, b]);
    expect(togglePick(two, c, true)).toEqual([b, c]);
  });

  it("removes an unticked pick and ignores a repeated tick", () => {
    expect(togglePick([a, b], a, false)).toEqual([b]);
    expect(togglePick([a, b], b, true)).toEqual([a, b]);
    expect(togglePick([a], c, false)).toEqual([a]);
  });

  it("answers membership by id", () => {
    const ids = pickedIds([a, c]);
    expect(ids.has("a")).toBe(true);
    expect(ids.has("b")).toBe(false);
  });
});
