import { describe, expect, it } from "vitest";
import type { CellSummary, ExperimentReport, RunResult, TurnFacts } from "../domain/experiment.js";
import { escapeHtml, renderHtmlReport } from "./report-html.js";
import { renderJsonReport } from "./report-json.js";
import { renderTerminalReport } from "./report-terminal.js";

const XSS = `<script>alert("x")</script>`;

function cell(overrides: Partial<CellSummary> = {}): CellSummary {
  return {
    cell: "dual_agent · sim · sim",
    label: "dual_agent · sim",
    runs: 12,
    successes: 9,
    success_rate: 0.75,
    success_ci: [0.4677, 0.9111],
    ttft_p50_ms: 120.4,
    ttft_p95_ms: 340,
    wall_p50_ms: 850,
    wall_p95_ms: 12_345,
    tokens_per_turn: 1234.4,
    cached_share: 0.42,
    fallback_rate: 0.05,
    tool_error_rate: 0,
    cost_usd: 0.01234,
    cost_source: "estimated",
    by_category: { multi_turn: { runs: 4, successes: 1 }, simple: { runs: 8, successes: 8 } },
    ...overrides,
  };
}

function turn(answer: string): TurnFacts {
  return {
    status: "completed",
    answer,
    rounds: 2,
    tool_calls: [],
    ttft_ms: 10,
    wall_time_ms: 20,
    prompt_tokens: 10,
    cached_tokens: 0,
    completion_tokens: 5,
    total_tokens: 15,
    fallback_count: 0,
    tool_count: 0,
  };
}

function failedRun(index: number, answer: string, failures: string[]): RunResult {
  return {
    session_id: `session-${index}`,
    run_key: `dual_agent · sim · sim/scenario-${index}/1`,
    cell: "dual_agent · sim · sim",
    scenario: `scenario-${index}`,
    category: "simple",
    repetition: 1,
    turns: [turn(answer)],
    score: {
      tool_precision: 1,
      tool_recall: 0,
      argument_match: 0,
      irrelevance: null,
      answer: null,
      success: false,
      failures,
    },
    cost_usd: 0,
    cost_source: "estimated",
  };
}

function report(overrides: Partial<ExperimentReport> = {}): ExperimentReport {
  return {
    experiment_id: "bundled-1234abcd",
    suite: "bundled",
    generated_at: "2025-01-02T03:04:05.000Z",
    simulated: true,
    cells: [
      cell({ cell: "chat_agent_tools · sim · sim", label: "chat_agent_tools · sim" }),
      cell(),
    ],
    runs: [],
    ...overrides,
  };
}

describe("renderTerminalReport", () => {
  it("prints one row per cell, the categories of each, and the simulated note", () => {
    const text = renderTerminalReport(report());
    const lines = text.split("\n");
    expect(lines[0]).toBe(
      "experiment bundled-1234abcd · suite bundled · 24 finished runs · 2 cells",
    );
    const header = lines[2] ?? "";
    for (const column of [
      "cell",
      "runs",
      "success [95% CI]",
      "TTFT p50 / p95",
      "wall p50 / p95",
      "tokens/turn",
      "cached",
      "fallback",
      "tool err",
      "cost",
    ]) {
      expect(header).toContain(column);
    }
    const row = lines[4] ?? "";
    expect(row.startsWith("dual_agent · sim")).toBe(true);
    expect(row.split(/\s{2,}/)).toEqual([
      "dual_agent · sim",
      "12",
      "75% [47–91]",
      "120 ms / 340 ms",
      "850 ms / 12.3 s",
      "1,234",
      "42%",
      "5%",
      "0%",
      "$0.0123 est.",
    ]);
    expect(lines[5]).toMatch(
      /^cost: reported = the providers' own prices; est\. = the price table/,
    );
    expect(lines).toContain("  dual_agent · sim: simple 100% (8/8) · multi_turn 25% (1/4)");
    expect(text.trimEnd().split("\n").at(-1)).toBe(
      "simulated model: these numbers show the machinery, not a model's quality",
    );
  });

  it("says where each cell's cost comes from: reported, estimated, mixed or unknown", () => {
    const text = renderTerminalReport(
      report({
        cells: [
          cell({ label: "a", cost_usd: 1.2, cost_source: "reported" }),
          cell({ label: "b", cost_usd: 0.4, cost_source: "mixed" }),
          cell({ label: "c", cost_usd: null, cost_source: "unknown" }),
        ],
      }),
    );
    const costs = text
      .split("\n")
      .slice(3, 6)
      .map((row) => row.split(/\s{2,}/).at(-1));
    expect(costs).toEqual(["$1.20 reported", "$0.4000 mixed", "unknown"]);
  });

  it("shows a cell without runs as dashes; no note for real models", () => {
    const text = renderTerminalReport(
      report({
        simulated: false,
        cells: [
          cell({
            label: "openai\u001b[31m",
            runs: 0,
            successes: 0,
            success_rate: 0,
            success_ci: [0, 1],
            ttft_p50_ms: null,
            ttft_p95_ms: null,
            wall_p50_ms: null,
            wall_p95_ms: null,
            cost_usd: null,
            cost_source: "unknown",
            by_category: {},
          }),
        ],
      }),
    );
    expect(text).not.toContain("simulated model");
    expect(text).not.toContain("\u001b");
    const row = text.split("\n")[3] ?? "";
    expect(row.split(/\s{2,}/).slice(1)).toEqual(["0", "–", "–", "–", "–", "–", "–", "–", "–"]);
    // A label's control characters are shown escaped, never sent raw to the terminal.
    expect(text).toContain("  openai\\x1b[31m: no finished runs");
  });
});

describe("renderJsonReport", () => {
  it("is the report object, pretty-printed", () => {
    const value = report({ runs: [failedRun(1, "no", ["turn 1: expected mock_search"])] });
    const text = renderJsonReport(value);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).toContain('\n  "experiment_id": "bundled-1234abcd",');
    expect(text.endsWith("}\n")).toBe(true);
  });
});

describe("renderHtmlReport", () => {
  const hostile = report({
    suite: `suite ${XSS}`,
    cells: [
      cell({ label: `label <img src=x onerror=alert(1)>` }),
      cell({ cell: "empty", label: "empty cell", runs: 0, by_category: {}, ttft_p50_ms: null }),
    ],
    runs: [
      failedRun(1, `Sure! ${XSS} and https://evil.example/x`, [`turn 1: </li>${XSS}`]),
      ...Array.from({ length: 60 }, (_, index) =>
        failedRun(
          index + 2,
          "plain",
          Array.from({ length: 12 }, (_, line) => `failure ${line}`),
        ),
      ),
    ],
  });
  const html = renderHtmlReport(hostile);

  it("is one self-contained document: no script, no external reference", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html.toLowerCase()).not.toContain("<script");
    // Every "<" of a text is escaped, so a tag here is the report's own.
    expect(html).not.toMatch(/<[^>]*\s(src|href|xlink:href)\s*=/i);
    expect(html).not.toContain("@import");
    expect(html).not.toMatch(/url\(/i);
    // The only "http" in the file would be the hostile answer's own link, shown as text.
    expect(html.replace("https://evil.example/x", "")).not.toContain("http");
    expect(html).toContain("<style>");
    expect(html.match(/<svg /g)?.length).toBe(5);
  });

  it("escapes every text that came from a suite or a model", () => {
    expect(html).toContain(
      `<title>Agent Lab experiment · suite &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</title>`,
    );
    expect(html).toContain("label &lt;img src=x onerror=alert(1)&gt;");
    expect(html).not.toContain("<img");
    expect(html).toContain("turn 1: &lt;/li&gt;&lt;script&gt;");
    expect(html).toContain("Sure! &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(escapeHtml(`a&b<c>"d"'e'`)).toBe("a&amp;b&lt;c&gt;&quot;d&quot;&#39;e&#39;");
  });

  it("has the summary, the charts, the category matrix and a capped failures list", () => {
    for (const heading of [
      "Summary",
      "Success rate",
      "Time to first token",
      "Turn wall time",
      "Tokens",
      "Success by category",
      "Failures",
    ]) {
      expect(html).toContain(`<h2>${heading}</h2>`);
    }
    expect(html).toContain("simulated model: these numbers show the machinery");
    expect(html).toContain("<th>simple</th><th>multi_turn</th>");
    expect(html).toContain("25% (1/4)");
    // 61 failed runs: 50 listed, each with at most 8 failure lines.
    expect(html.match(/<li><code>/g)?.length).toBe(50);
    expect(html).toContain("… and 11 more failed runs");
    expect(html).toContain("… 4 more");
    expect(html).toContain("no finished runs");
    expect(html).toContain("<td>$0.0123 est.</td>");
    expect(html).toContain("est. = the price table");
  });

  it("says so when every run succeeded", () => {
    expect(renderHtmlReport(report())).toContain("Every finished run succeeded.");
  });
});
