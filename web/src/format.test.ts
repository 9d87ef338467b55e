import { describe, expect, it } from "vitest";
import { formatDuration } from "../../src/domain/number-format.js";
import { formatTickMs } from "./format.js";

describe("formatTickMs", () => {
  it("labels chart axes in the lab's one duration format, the origin a bare 0", () => {
    expect([0, 250, 1000, 1500, 90_000].map(formatTickMs)).toStrictEqual([
      "0",
      "250 ms",
      "1.00 s",
      "1.50 s",
      "1 min 30 s",
    ]);
    for (const tick of [5, 250, 1500]) expect(formatTickMs(tick)).toBe(formatDuration(tick));
  });
});
