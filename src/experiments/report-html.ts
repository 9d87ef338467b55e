import type { CellSummary, ExperimentReport, RunResult } from "../domain/experiment.js";
import { roundTicks } from "../domain/number-format.js";
import {
  COST_NOTE,
  categoryScores,
  formatCostWithSource,
  formatCount,
  formatMilliseconds,
  formatPercent,
  formatPercentiles,
  formatSuccess,
  reportCategories,
  SIMULATED_NOTE,
} from "./report-format.js";

/**
 * The report as ONE self-contained HTML file: inline CSS and SVG, no script, nothing loaded from
 * anywhere, so it opens from a disk or a mail attachment. Every text is escaped: labels come from
 * suite files and answers from models, and either may be hostile.
 */

const MAX_FAILED_RUNS = 50;
const MAX_FAILURE_LINES = 8;
const MAX_ANSWER_CHARS = 400;
const MAX_LABEL_CHARS = 38;

/** Text for HTML content and attribute values alike. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const esc = escapeHtml;

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --ok: #2f8f4e;
  --bar: #4a6fd1; --bar-light: #b7c7f0; --cached: #8e5bd1; --bad: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f6f7fa; }
main { max-width: 1120px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 8px 0; }
h3 { font-size: 13px; margin: 12px 0 4px; color: var(--muted); font-weight: 600; }
.meta { color: var(--muted); margin: 0 0 12px; }
.note { background: #fff6d6; border: 1px solid #ecd58a; border-radius: 6px; padding: 8px 12px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-top: 16px; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 5px 7px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { font-weight: 600; color: var(--muted); white-space: normal; vertical-align: bottom; }
table { font-size: 13px; }
.matrix td { text-align: center; }
.matrix td:first-child { text-align: left; }
svg { width: 100%; height: auto; display: block; }
svg text { font: 12px system-ui, sans-serif; fill: var(--ink); }
svg .muted { fill: var(--muted); }
.legend { color: var(--muted); font-size: 12px; margin: 4px 0 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin: 0 4px 0 10px; vertical-align: baseline; }
ol.failures { padding-left: 20px; margin: 0; }
ol.failures li { margin: 8px 0; }
ol.failures code { background: #eef1f6; padding: 1px 4px; border-radius: 3px; }
ol.failures ul { margin: 4px 0; padding-left: 18px; color: var(--bad); }
blockquote { margin: 4px 0; padding: 4px 10px; border-left: 3px solid var(--line); color: var(--muted); white-space: pre-wrap; word-break: break-word; }
`;

// Chart geometry, in SVG user units (the SVG scales to the page's width).
const WIDTH = 1000;
const LABEL_WIDTH = 300;
const PLOT_LEFT = LABEL_WIDTH + 10;
const PLOT_WIDTH = 480;
const ROW = 26;
const TOP = 8;
const AXIS = 22;

function chart(rows: number, body: string, label: string): string {
  const height = TOP + rows * ROW + AXIS;
  return `<svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${esc(label)}">${body}</svg>`;
}

function rowLabel(cell: CellSummary, index: number): string {
  const y = TOP + index * ROW + ROW / 2 + 4;
  return `<text x="${LABEL_WIDTH}" y="${y}" text-anchor="end"><title>${esc(cell.label)}</title>${esc(clip(cell.label, MAX_LABEL_CHARS))}</text>`;
}

/**
 * Gridlines and tick labels under the plot area, at round values (roundTicks) from 0 to the last
 * tick, which is the right edge of the plot: draw the bars with the scale it returns.
 */
function axis(
  rows: number,
  max: number,
  format: (value: number) => string,
): { svg: string; scale: number } {
  const bottom = TOP + rows * ROW;
  const ticks = roundTicks(max);
  const end = ticks.at(-1) ?? 1;
  const svg = ticks.map((tick) => {
    const x = Number((PLOT_LEFT + (tick / end) * PLOT_WIDTH).toFixed(1));
    return `<line x1="${x}" y1="${TOP}" x2="${x}" y2="${bottom}" stroke="#e6e9ef"/><text class="muted" x="${x}" y="${bottom + 15}" text-anchor="middle">${esc(format(tick))}</text>`;
  });
  return { svg: svg.join(""), scale: PLOT_WIDTH / end };
}

function successChart(cells: readonly CellSummary[]): string {
  const rows = cells.map((cell, index) => {
    const y = TOP + index * ROW;
    const mid = y + ROW / 2;
    if (cell.runs === 0) {
      return `${rowLabel(cell, index)}<text class="muted" x="${PLOT_LEFT + 4}" y="${mid + 4}">no finished runs</text>`;
    }
    const width = cell.success_rate * PLOT_WIDTH;
    const [low, high] = cell.success_ci;
    const x1 = PLOT_LEFT + low * PLOT_WIDTH;
    const x2 = PLOT_LEFT + high * PLOT_WIDTH;
    const summary = `${formatSuccess(cell)} of ${cell.runs}`;
    return [
      rowLabel(cell, index),
      `<rect x="${PLOT_LEFT}" y="${y + 5}" width="${width.toFixed(1)}" height="${ROW - 10}" fill="var(--ok)" rx="2"><title>${esc(`${cell.label}: ${cell.successes}/${cell.runs} succeeded, 95% CI ${formatPercent(low)}–${formatPercent(high)}`)}</title></rect>`,
      `<line x1="${x1.toFixed(1)}" y1="${mid}" x2="${x2.toFixed(1)}" y2="${mid}" stroke="var(--ink)" stroke-width="1.5"/>`,
      `<line x1="${x1.toFixed(1)}" y1="${mid - 6}" x2="${x1.toFixed(1)}" y2="${mid + 6}" stroke="var(--ink)" stroke-width="1.5"/>`,
      `<line x1="${x2.toFixed(1)}" y1="${mid - 6}" x2="${x2.toFixed(1)}" y2="${mid + 6}" stroke="var(--ink)" stroke-width="1.5"/>`,
      `<text x="${PLOT_LEFT + PLOT_WIDTH + 12}" y="${mid + 4}">${esc(summary)}</text>`,
    ].join("");
  });
  return chart(
    cells.length,
    axis(cells.length, 1, (value) => formatPercent(value)).svg + rows.join(""),
    "success rate per cell with 95% confidence interval",
  );
}

function rangeChart(
  cells: readonly CellSummary[],
  pick: (cell: CellSummary) => [number | null, number | null],
  what: string,
): string {
  const max = Math.max(0, ...cells.map((cell) => pick(cell)[1] ?? pick(cell)[0] ?? 0));
  const grid = axis(cells.length, max, (value) => formatMilliseconds(value));
  const { scale } = grid;
  const rows = cells.map((cell, index) => {
    const y = TOP + index * ROW;
    const mid = y + ROW / 2;
    const [p50, p95] = pick(cell);
    if (p50 === null && p95 === null) {
      return `${rowLabel(cell, index)}<text class="muted" x="${PLOT_LEFT + 4}" y="${mid + 4}">no measurement</text>`;
    }
    const w50 = (p50 ?? 0) * scale;
    const w95 = Math.max(w50, (p95 ?? p50 ?? 0) * scale);
    return [
      rowLabel(cell, index),
      `<rect x="${PLOT_LEFT}" y="${y + 5}" width="${w95.toFixed(1)}" height="${ROW - 10}" fill="var(--bar-light)" rx="2"><title>${esc(`${cell.label}: ${what} p95 ${formatMilliseconds(p95)}`)}</title></rect>`,
      `<rect x="${PLOT_LEFT}" y="${y + 5}" width="${w50.toFixed(1)}" height="${ROW - 10}" fill="var(--bar)" rx="2"><title>${esc(`${cell.label}: ${what} p50 ${formatMilliseconds(p50)}`)}</title></rect>`,
      `<text x="${PLOT_LEFT + PLOT_WIDTH + 12}" y="${mid + 4}">${esc(`p50 ${formatMilliseconds(p50)} · p95 ${formatMilliseconds(p95)}`)}</text>`,
    ].join("");
  });
  return chart(cells.length, grid.svg + rows.join(""), `${what} p50 and p95 per cell`);
}

/** One bar per cell on a 0..max scale (a max of 1 is a share). */
function barChart(
  cells: readonly CellSummary[],
  value: (cell: CellSummary) => number,
  options: { max: number; color: string; format: (value: number) => string; what: string },
): string {
  const grid = axis(cells.length, options.max, options.format);
  const { scale } = grid;
  const rows = cells.map((cell, index) => {
    const y = TOP + index * ROW;
    const mid = y + ROW / 2;
    if (cell.runs === 0) {
      return `${rowLabel(cell, index)}<text class="muted" x="${PLOT_LEFT + 4}" y="${mid + 4}">no finished runs</text>`;
    }
    const text = options.format(value(cell));
    const width = Math.min(PLOT_WIDTH, Math.max(0, value(cell) * scale));
    return [
      rowLabel(cell, index),
      `<rect x="${PLOT_LEFT}" y="${y + 5}" width="${width.toFixed(1)}" height="${ROW - 10}" fill="${options.color}" rx="2"><title>${esc(`${cell.label}: ${options.what} ${text}`)}</title></rect>`,
      `<text x="${PLOT_LEFT + PLOT_WIDTH + 12}" y="${mid + 4}">${esc(text)}</text>`,
    ].join("");
  });
  return chart(cells.length, grid.svg + rows.join(""), `${options.what} per cell`);
}

function tokensCharts(cells: readonly CellSummary[]): string {
  const tokens = barChart(cells, (cell) => cell.tokens_per_turn, {
    max: Math.max(0, ...cells.map((cell) => cell.tokens_per_turn)),
    color: "var(--bar)",
    format: formatCount,
    what: "tokens per turn",
  });
  const cached = barChart(cells, (cell) => cell.cached_share, {
    max: 1,
    color: "var(--cached)",
    format: formatPercent,
    what: "cached share of prompt tokens",
  });
  return `<h3>Tokens per turn</h3>${tokens}<h3>Cached share of prompt tokens</h3>${cached}`;
}

function summaryTable(cells: readonly CellSummary[]): string {
  const head = [
    "cell",
    "runs",
    "success [95% CI]",
    "TTFT p50 / p95",
    "wall p50 / p95",
    "tokens/turn",
    "cached",
    "fallback",
    "tool errors",
    "cost",
  ];
  const rows = cells.map((cell) => {
    const none = cell.runs === 0;
    return [
      cell.label,
      formatCount(cell.runs),
      formatSuccess(cell),
      formatPercentiles(cell.ttft_p50_ms, cell.ttft_p95_ms),
      formatPercentiles(cell.wall_p50_ms, cell.wall_p95_ms),
      none ? "–" : formatCount(cell.tokens_per_turn),
      none ? "–" : formatPercent(cell.cached_share),
      none ? "–" : formatPercent(cell.fallback_rate),
      none ? "–" : formatPercent(cell.tool_error_rate),
      none ? "–" : formatCostWithSource(cell),
    ];
  });
  return `<table><thead><tr>${head.map((text) => `<th>${esc(text)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((row) => `<tr>${row.map((text) => `<td>${esc(text)}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

/** Red (0%) through amber to green (100%). */
function heat(share: number): string {
  return `hsl(${Math.round(share * 120)} 65% 86%)`;
}

function categoryMatrix(cells: readonly CellSummary[]): string {
  const categories = reportCategories(cells);
  if (categories.length === 0) return `<p class="meta">No finished runs yet.</p>`;
  const rows = cells.map((cell) => {
    const scores = new Map(categoryScores(cell).map((score) => [score.category, score]));
    const tds = categories.map((category) => {
      const score = scores.get(category);
      if (score === undefined || score.runs === 0) return `<td>–</td>`;
      const share = score.successes / score.runs;
      return `<td style="background:${heat(share)}">${esc(`${formatPercent(share)} (${score.successes}/${score.runs})`)}</td>`;
    });
    return `<tr><td>${esc(cell.label)}</td>${tds.join("")}</tr>`;
  });
  return `<table class="matrix"><thead><tr><th>cell</th>${categories
    .map((category) => `<th>${esc(category)}</th>`)
    .join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function failureList(report: ExperimentReport): string {
  const failed = report.runs.filter((run) => !run.score.success);
  if (failed.length === 0) return `<p class="meta">Every finished run succeeded.</p>`;
  const labels = new Map(report.cells.map((cell) => [cell.cell, cell.label]));
  const items = failed.slice(0, MAX_FAILED_RUNS).map((run: RunResult) => {
    const lines = run.score.failures.slice(0, MAX_FAILURE_LINES);
    const more = run.score.failures.length - lines.length;
    const answer = run.turns.at(-1)?.answer ?? "";
    return [
      `<li><code>${esc(run.run_key)}</code> <span class="meta">${esc(labels.get(run.cell) ?? run.cell)} · ${esc(run.category)} · session ${esc(run.session_id)}</span>`,
      `<ul>${lines.map((line) => `<li>${esc(line)}</li>`).join("")}${more > 0 ? `<li>${esc(`… ${more} more`)}</li>` : ""}</ul>`,
      answer ? `<blockquote>${esc(clip(answer, MAX_ANSWER_CHARS))}</blockquote>` : "",
      "</li>",
    ].join("");
  });
  const rest = failed.length - items.length;
  return `<ol class="failures">${items.join("")}</ol>${
    rest > 0 ? `<p class="meta">${esc(`… and ${rest} more failed runs (see report.json)`)}</p>` : ""
  }`;
}

function legend(entries: readonly [string, string][]): string {
  return `<p class="legend">${entries
    .map(([color, text]) => `<span class="swatch" style="background:${color}"></span>${esc(text)}`)
    .join("")}</p>`;
}

export function renderHtmlReport(report: ExperimentReport): string {
  const { cells } = report;
  const finished = cells.reduce((sum, cell) => sum + cell.runs, 0);
  const title = `Agent Lab experiment · ${report.suite}`;
  const body = [
    `<h1>${esc(title)}</h1>`,
    `<p class="meta">${esc(`experiment ${report.experiment_id} · ${formatCount(finished)} finished runs · ${cells.length} cells · generated ${report.generated_at}`)}</p>`,
    report.simulated ? `<p class="note">${esc(SIMULATED_NOTE)}</p>` : "",
    `<section><h2>Summary</h2>${summaryTable(cells)}<p class="legend">${esc(COST_NOTE)}</p></section>`,
    `<section><h2>Success rate</h2>${successChart(cells)}${legend([["var(--ok)", "success rate"]])}<p class="legend">Whiskers: 95% Wilson interval.</p></section>`,
    `<section><h2>Time to first token</h2>${rangeChart(cells, (cell) => [cell.ttft_p50_ms, cell.ttft_p95_ms], "TTFT")}${legend(
      [
        ["var(--bar)", "p50"],
        ["var(--bar-light)", "p95"],
      ],
    )}</section>`,
    `<section><h2>Turn wall time</h2>${rangeChart(cells, (cell) => [cell.wall_p50_ms, cell.wall_p95_ms], "wall time")}${legend(
      [
        ["var(--bar)", "p50"],
        ["var(--bar-light)", "p95"],
      ],
    )}</section>`,
    `<section><h2>Tokens</h2>${tokensCharts(cells)}</section>`,
    `<section><h2>Success by category</h2>${categoryMatrix(cells)}</section>`,
    `<section><h2>Failures</h2>${failureList(report)}</section>`,
  ].join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
