import { describe, expect, it } from "vitest";
import { commonSegmentPrefix, PrefixCache } from "./prefix-cache.js";

describe("PrefixCache", () => {
  it("measures common prefixes of one-segment prompts", () => {
    expect(commonSegmentPrefix([[1, 2, 3]], [[1, 2, 4, 5]])).toBe(2);
    expect(commonSegmentPrefix([[1, 2]], [[1, 2, 3]])).toBe(2);
    expect(commonSegmentPrefix([[]], [[1]])).toBe(0);
    expect(commonSegmentPrefix([[9]], [[1]])).toBe(0);
  });

  it("measures common prefixes of segmented prompts as if flattened", () => {
    const shared = [1, 2, 3];
    expect(commonSegmentPrefix([shared, [4, 5]], [shared, [4, 6]])).toBe(4);
    expect(
      commonSegmentPrefix(
        [
          [1, 2],
          [3, 4],
        ],
        [[1], [2, 3, 9]],
      ),
    ).toBe(3);
    expect(commonSegmentPrefix([[], [1]], [[1], []])).toBe(1);
    expect(commonSegmentPrefix([shared], [])).toBe(0);
  });

  it("caches per conversation, starting cold", () => {
    const cache = new PrefixCache();
    expect(cache.lookupAndStore("a", [[1, 2, 3]])).toBe(0);
    expect(cache.lookupAndStore("a", [[1, 2, 3, 4]])).toBe(3);
    expect(cache.lookupAndStore("b", [[1, 2, 3, 4]])).toBe(0);
  });

  it("keeps a few recent prompts, so an interleaved caller does not evict the other", () => {
    const cache = new PrefixCache(10, 2);
    cache.lookupAndStore("a", [[1, 2, 3]]);
    expect(cache.lookupAndStore("a", [[7, 8]])).toBe(0); // e.g. a fallback call
    expect(cache.lookupAndStore("a", [[1, 2, 3, 4]])).toBe(3);
    cache.lookupAndStore("a", [[5]]);
    cache.lookupAndStore("a", [[6]]);
    expect(cache.lookupAndStore("a", [[1, 2, 3, 4]])).toBe(0); // only the last two are kept
  });

  it("forgets the least recently used conversation beyond its bound", () => {
    const cache = new PrefixCache(2, 4);
    cache.lookupAndStore("a", [[1]]);
    cache.lookupAndStore("b", [[2]]);
    cache.lookupAndStore("a", [[1, 1]]); // a is now the most recent
    cache.lookupAndStore("c", [[3]]); // evicts b
    expect(cache.lookupAndStore("a", [[1, 1, 1]])).toBe(2);
    expect(cache.lookupAndStore("b", [[2]])).toBe(0);
  });
});
