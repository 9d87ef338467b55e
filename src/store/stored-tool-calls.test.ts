import { describe, expect, it } from "vitest";
import { z } from "zod";
import { deep, mutations, outcome } from "../../test/store/probes.js";
import { ToolCallEvent } from "../domain/events.js";
import { parseJsonText } from "../domain/validation.js";
import { parseStoredToolCalls } from "./stored-tool-calls.js";

const ToolCalls = z.array(ToolCallEvent);

const CALLS = [
  {
    id: "call_1",
    name: "mock_search",
    arguments: { query: "orders", limit: 3, filters: { open: true, tags: ["a", "b"] } },
    raw_arguments: '{"query":"orders","limit":3}',
  },
  { id: "call_2", name: "mock_ticket", arguments: {}, raw_arguments: "{}" },
];

/** What zod's reading gives for the text (output or refusal), and what the fast path gives. */
function both(text: string) {
  const where = "message 7 tool_calls";
  return {
    zod: outcome(() => parseJsonText(ToolCalls, text, where)),
    fast: outcome(() => parseStoredToolCalls(text, where)),
  };
}

describe("parseStoredToolCalls", () => {
  it("reads what every writer stores as zod does: same calls, same key order, fresh copies", () => {
    const text = JSON.stringify(CALLS);
    const { zod, fast } = both(text);
    expect(fast).toStrictEqual(zod);
    expect(JSON.stringify((fast as { ok: unknown }).ok)).toBe(text);
    expect(parseStoredToolCalls("[]", "m")).toEqual([]);
    // Each read is its own: a reader that edits its calls changes no other read.
    const [first] = parseStoredToolCalls(text, "m");
    (first?.arguments as Record<string, unknown>).query = "edited";
    expect(parseStoredToolCalls(text, "m")[0]?.arguments.query).toBe("orders");
  });

  it("gives zod's verdict on every one-value mutation of stored calls", () => {
    const texts = mutations(CALLS)
      .map((value) => JSON.stringify(value))
      .filter((text): text is string => text !== undefined);
    expect(texts.length).toBeGreaterThan(200);
    let refused = 0;
    for (const text of texts) {
      const { zod, fast } = both(text);
      expect(fast, text).toStrictEqual(zod);
      if ("ok" in zod && "ok" in fast) {
        expect(JSON.stringify(fast.ok), text).toBe(JSON.stringify(zod.ok));
      } else refused++;
    }
    // The mutations exercise the refusals, not only the plain shape.
    expect(refused).toBeGreaterThan(50);
  });

  it.each([
    ["not JSON", "[{"],
    ["not an array", '{"id":"c"}'],
    [
      "an own __proto__ key",
      '[{"id":"c","name":"n","arguments":{"__proto__":{"a":1}},"raw_arguments":"{}"}]',
    ],
    ["arguments nested too deep", JSON.stringify([{ ...CALLS[1], arguments: deep(65) }])],
    ["arguments at the depth limit", JSON.stringify([{ ...CALLS[1], arguments: deep(63) }])],
  ])("gives zod's verdict on %s", (_label, text) => {
    const { zod, fast } = both(text);
    expect(fast).toStrictEqual(zod);
  });
});
