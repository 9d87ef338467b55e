import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../domain/turn-events.js";
import type { CliIo } from "./output.js";
import { TurnPrinter } from "./turn-printer.js";

function printed(events: TurnEvent[]): string {
  let text = "";
  const io: CliIo = {
    stdout: { write: (chunk) => (text += chunk) },
    stderr: { write: () => true },
    env: {},
  };
  const printer = new TurnPrinter(io);
  for (const event of events) printer.print(event);
  return text;
}

const search = {
  id: "e1",
  name: "mock_search",
  arguments: { query: "x" },
  raw_arguments: '{"query":"x"}',
};

describe("TurnPrinter", () => {
  it("holds a tool line that arrives mid-line until the line ends", () => {
    expect(
      printed([
        { type: "text_delta", round_index: 1, text: "Let me search. " },
        { type: "tool_call", round_index: 1, event: search },
        { type: "text_delta", round_index: 1, text: "Then\nmore" },
        {
          type: "tool_result",
          round_index: 1,
          event_id: "e1",
          event_name: "mock_search",
          ok: true,
          content: "{}",
          latency_ms: 12.4,
          used_fallback: false,
        },
        { type: "round_end", round_index: 1, finish_reason: "stop", tool_calls: 1 },
      ]),
    ).toBe('Let me search. Then\n  → mock_search {"query":"x"}\nmore\n  ← mock_search ok 12 ms\n');
  });

  it("prints fallbacks, tool errors and unparsed arguments", () => {
    const broken = { ...search, arguments: {}, raw_arguments: '{"query":' };
    expect(
      printed([
        { type: "tool_call", round_index: 1, event: broken },
        {
          type: "fallback_start",
          round_index: 1,
          event_id: "e1",
          event_name: "mock_search",
          reason: "not JSON",
        },
        {
          type: "fallback_end",
          round_index: 1,
          event_id: "e1",
          ok: true,
          event: search,
          error: null,
        },
        {
          type: "tool_result",
          round_index: 1,
          event_id: "e1",
          event_name: "mock_search",
          ok: false,
          content: '{"error":"timed out"}',
          latency_ms: 0.25,
          used_fallback: true,
        },
      ]).split("\n"),
    ).toEqual([
      '  → mock_search {"query":',
      "  ↻ fallback for mock_search: not JSON",
      '  ↻ fallback for mock_search repaired: {"query":"x"}',
      "  ← mock_search error 0.3 ms (after fallback): timed out",
      "",
    ]);
  });
});
