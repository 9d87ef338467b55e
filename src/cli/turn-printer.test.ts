import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../domain/turn-events.js";
import type { CliIo } from "./output.js";
import { TurnPrinter } from "./turn-printer.js";
import type { TurnReport } from "./turn-report.js";

function printed(events: TurnEvent[], { tty = false } = {}): string {
  let text = "";
  const io: CliIo = {
    stdout: { write: (chunk) => (text += chunk), isTTY: tty },
    stderr: { write: () => true },
    env: {},
  };
  const printer = new TurnPrinter(io);
  for (const event of events) printer.print(event);
  return text;
}

const reasoning = (text: string): TurnEvent => ({ type: "reasoning_delta", round_index: 1, text });
const answer = (text: string): TurnEvent => ({ type: "text_delta", round_index: 1, text });
const roundEnd: TurnEvent = {
  type: "round_end",
  round_index: 1,
  finish_reason: "stop",
  tool_calls: 0,
};

function turnReport(usage: Partial<TurnReport["usage"]>): TurnReport {
  return {
    session_id: "s1",
    turn_index: 1,
    mode: "dual_agent",
    simulated: false,
    status: "completed",
    answer: "",
    tool_calls: [],
    usage: {
      turn_index: 1,
      prompt_tokens: 100,
      completion_tokens: 250,
      total_tokens: 350,
      cached_tokens: 0,
      reasoning_tokens: 200,
      cache_write_tokens: 0,
      elapsed_ms: 900,
      call_count: 1,
      fallback_count: 0,
      tool_count: 0,
      estimated_count: 0,
      cost_usd: 0.0025,
      reported_cost_count: 1,
      unpriced_count: 0,
      turn_wall_time_ms: 900,
      ...usage,
    },
    ttft_ms: 120,
    wall_time_ms: 900,
    error: null,
  };
}

function footerOf(report: TurnReport): string {
  let text = "";
  const printer = new TurnPrinter({
    stdout: { write: (chunk) => (text += chunk) },
    stderr: { write: () => true },
    env: {},
  });
  printer.footer(report);
  return text.trim();
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

  it("collapses streamed reasoning into one line with its length, before the answer", () => {
    expect(
      printed([reasoning("The user wants "), reasoning("a sum: 2 + 2."), answer("4"), roundEnd]),
    ).toBe("  thinking… (28 chars)\n4\n");
  });

  it("dims the reasoning line on a terminal, and only there", () => {
    const text = printed([reasoning("hmm"), answer("ok"), roundEnd], { tty: true });
    expect(text).toBe("\x1b[2m  thinking… (3 chars)\x1b[22m\nok\n");
  });

  it("gives reasoning that starts mid-line its own line once the line ends", () => {
    expect(printed([answer("Let me think. "), reasoning("abc"), answer("Done.\n"), roundEnd])).toBe(
      "Let me think. Done.\n  thinking… (3 chars)\n",
    );
  });

  it("marks a refusal as a refusal, never as the answer", () => {
    expect(
      printed([
        answer("Sure"),
        { type: "refusal_delta", round_index: 1, text: "I can't " },
        { type: "refusal_delta", round_index: 1, text: "help with that." },
        roundEnd,
      ]),
    ).toBe("Sure\nrefusal: I can't help with that.\n");
  });

  it("shows a turn's reasoning tokens and cost, with its source, in the footer", () => {
    expect(footerOf(turnReport({}))).toBe(
      "── session s1 · turn 1 · completed · 350 tokens (200 reasoning) · $0.0025 reported · 1 call · TTFT 120 ms · wall 900 ms",
    );
    expect(footerOf(turnReport({ reported_cost_count: 0, cost_usd: 0.00004 }))).toContain(
      "· $0.000040 est. ·",
    );
    expect(
      footerOf(turnReport({ call_count: 3, reported_cost_count: 1, cost_usd: 0.5 })),
    ).toContain("· $0.5000 mixed ·");
    expect(footerOf(turnReport({ cost_usd: null, unpriced_count: 1 }))).toContain(
      "tokens (200 reasoning) · ? · 1 call",
    );
  });
});
