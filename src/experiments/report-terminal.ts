import type { CellSummary, ExperimentReport } from "../domain/experiment.js";
import { terminalSafe } from "../domain/terminal-text.js";
import {
  COST_NOTE,
  categoryScores,
  formatCostWithSource,
  formatCount,
  formatPercent,
  formatPercentiles,
  formatSuccess,
  SIMULATED_NOTE,
} from "./report-format.js";

interface Column {
  header: string;
  value: (cell: CellSummary) => string;
  align: "left" | "right";
}

const COLUMNS: readonly Column[] = [
  { header: "cell", value: (cell) => oneLine(cell.label), align: "left" },
  { header: "runs", value: (cell) => formatCount(cell.runs), align: "right" },
  { header: "success [95% CI]", value: formatSuccess, align: "right" },
  {
    header: "TTFT p50 / p95",
    value: (cell) => formatPercentiles(cell.ttft_p50_ms, cell.ttft_p95_ms),
    align: "right",
  },
  {
    header: "wall p50 / p95",
    value: (cell) => formatPercentiles(cell.wall_p50_ms, cell.wall_p95_ms),
    align: "right",
  },
  {
    header: "tokens/turn",
    value: (cell) => (cell.runs === 0 ? "–" : formatCount(cell.tokens_per_turn)),
    align: "right",
  },
  {
    header: "cached",
    value: (cell) => (cell.runs === 0 ? "–" : formatPercent(cell.cached_share)),
    align: "right",
  },
  {
    header: "fallback",
    value: (cell) => (cell.runs === 0 ? "–" : formatPercent(cell.fallback_rate)),
    align: "right",
  },
  {
    header: "tool err",
    value: (cell) => (cell.runs === 0 ? "–" : formatPercent(cell.tool_error_rate)),
    align: "right",
  },
  {
    header: "cost",
    value: (cell) => (cell.runs === 0 ? "–" : formatCostWithSource(cell)),
    align: "right",
  },
];

/** Labels and categories come from a suite file: no control characters reach the terminal. */
function oneLine(text: string): string {
  return terminalSafe(text.replace(/\s*\n\s*/g, " "));
}

function table(cells: readonly CellSummary[]): string[] {
  const rows = cells.map((cell) => COLUMNS.map((column) => column.value(cell)));
  const widths = COLUMNS.map((column, index) =>
    Math.max(column.header.length, ...rows.map((row) => (row[index] ?? "").length)),
  );
  const render = (row: readonly string[]) =>
    row
      .map((text, index) => {
        const width = widths[index] ?? 0;
        return COLUMNS[index]?.align === "right" ? text.padStart(width) : text.padEnd(width);
      })
      .join("  ")
      .trimEnd();
  return [render(COLUMNS.map((column) => column.header)), ...rows.map(render)];
}

function categoryLine(cell: CellSummary): string {
  const scores = categoryScores(cell).map(
    (score) =>
      `${oneLine(score.category)} ${formatPercent(score.runs === 0 ? null : score.successes / score.runs)} (${score.successes}/${score.runs})`,
  );
  return `  ${oneLine(cell.label)}: ${scores.length === 0 ? "no finished runs" : scores.join(" · ")}`;
}

/**
 * The report as a compact table, one row per cell, then each cell's success per category; a
 * simulated experiment says that its numbers measure the machinery.
 */
export function renderTerminalReport(report: ExperimentReport): string {
  const runs = report.cells.reduce((sum, cell) => sum + cell.runs, 0);
  const lines = [
    `experiment ${oneLine(report.experiment_id)} · suite ${oneLine(report.suite)} · ${formatCount(runs)} finished run${runs === 1 ? "" : "s"} · ${report.cells.length} cell${report.cells.length === 1 ? "" : "s"}`,
    "",
    ...table(report.cells),
    COST_NOTE,
    "",
    "success by category:",
    ...report.cells.map(categoryLine),
  ];
  if (report.simulated) lines.push("", SIMULATED_NOTE);
  return `${lines.join("\n")}\n`;
}
