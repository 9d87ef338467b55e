/** Pure numbers behind the experiment page: the matrix, success colours, cell deltas. */
import type { CellRun, CellSummary } from "./api-types.js";
import { formatCost } from "./cost.js";
import { formatInt, formatMs, formatPercent } from "./format.js";
import { type Direction, delta, type Verdict } from "./metrics.js";
import { belowFloor } from "./session-compare.js";

/** The scenario categories in the suite schema's order; others follow alphabetically. */
const CATEGORY_ORDER = [
  "simple",
  "multiple",
  "parallel",
  "irrelevance",
  "missing_parameter",
  "multi_turn",
];

export const categoryLabel = (category: string): string => category.replaceAll("_", " ");

/** The categories any cell ran, as matrix columns. */
export function matrixCategories(cells: readonly CellSummary[]): string[] {
  const seen = new Set<string>();
  for (const cell of cells)
    for (const category of Object.keys(cell.by_category)) seen.add(category);
  const rank = (category: string) => {
    const index = CATEGORY_ORDER.indexOf(category);
    return index === -1 ? CATEGORY_ORDER.length : index;
  };
  return [...seen].sort((left, right) => rank(left) - rank(right) || left.localeCompare(right));
}

export interface SuccessTally {
  runs: number;
  successes: number;
  /** successes / runs; null when nothing ran. */
  rate: number | null;
}

export function categoryTally(cell: CellSummary, category: string): SuccessTally {
  const entry = cell.by_category[category];
  if (!entry || entry.runs === 0) return { runs: 0, successes: 0, rate: null };
  return { runs: entry.runs, successes: entry.successes, rate: entry.successes / entry.runs };
}

export type SuccessLevel = "none" | "low" | "mid" | "good" | "high";

/** The colour band of a success rate: high ≥ 90%, good ≥ 70%, mid ≥ 40%, low below. */
export function successLevel(rate: number | null): SuccessLevel {
  if (rate === null || !Number.isFinite(rate)) return "none";
  if (rate >= 0.9) return "high";
  if (rate >= 0.7) return "good";
  if (rate >= 0.4) return "mid";
  return "low";
}

/** "52–97%": a 95% interval in whole percent. */
export function formatInterval(interval: readonly [number, number] | null | undefined): string {
  if (!interval) return "—";
  const [low, high] = interval;
  if (!Number.isFinite(low) || !Number.isFinite(high)) return "—";
  return `${Math.round(low * 100)}–${Math.round(high * 100)}%`;
}

/** Picks a cell for comparison; two at most, a third replaces the oldest pick. */
export function toggleCompare(
  current: readonly string[],
  cell: string,
  checked: boolean,
): string[] {
  const others = current.filter((item) => item !== cell);
  return checked ? [...others, cell].slice(-2) : others;
}

export type CellMetricUnit = "count" | "ms" | "ratio" | "usd";

export interface CellMetricDelta {
  key: string;
  label: string;
  unit: CellMetricUnit;
  direction: Direction;
  a: number | null;
  b: number | null;
  delta: number | null;
  percent: number | null;
  verdict: Verdict;
  /** Why the row is not coloured (a difference too small to tell from noise), or null. */
  note: string | null;
}

const COMPARED: {
  key: keyof CellSummary;
  label: string;
  unit: CellMetricUnit;
  direction: Direction;
}[] = [
  { key: "success_rate", label: "Success", unit: "ratio", direction: "higher" },
  { key: "runs", label: "Runs", unit: "count", direction: "neutral" },
  { key: "ttft_p50_ms", label: "TTFT p50", unit: "ms", direction: "lower" },
  { key: "ttft_p95_ms", label: "TTFT p95", unit: "ms", direction: "lower" },
  { key: "wall_p50_ms", label: "Wall time p50", unit: "ms", direction: "lower" },
  { key: "wall_p95_ms", label: "Wall time p95", unit: "ms", direction: "lower" },
  { key: "tokens_per_turn", label: "Tokens per turn", unit: "count", direction: "lower" },
  { key: "cached_share", label: "Cached share of prompt", unit: "ratio", direction: "higher" },
  { key: "fallback_rate", label: "Fallbacks per tool call", unit: "ratio", direction: "lower" },
  { key: "tool_error_rate", label: "Tool error rate", unit: "ratio", direction: "lower" },
  { key: "cost_usd", label: "Cost", unit: "usd", direction: "lower" },
];

const numberOrNull = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

/**
 * Cell B against cell A, metric by metric, with B − A, the change relative to A and a verdict,
 * which is not better or worse for timings both under TIMING_FLOOR_MS or shares moving less than
 * RATIO_FLOOR, as between two sessions (session-compare.ts): 0.33 against 0.34 ms read "+0 ms",
 * in red.
 */
export function compareCells(a: CellSummary, b: CellSummary): CellMetricDelta[] {
  return COMPARED.map(({ key, label, unit, direction }) => {
    const left = numberOrNull(a[key]);
    const right = numberOrNull(b[key]);
    const row = {
      key,
      label,
      unit,
      direction,
      a: left,
      b: right,
      ...delta(left, right, direction),
    };
    return { ...row, ...noise(row) };
  });
}

function noise(row: Omit<CellMetricDelta, "note">): Pick<CellMetricDelta, "verdict" | "note"> {
  const judged = row.verdict === "better" || row.verdict === "worse";
  const floor = judged ? belowFloor(row) : null;
  return floor === null ? { verdict: row.verdict, note: null } : { verdict: "noise", note: floor };
}

export function formatCellMetric(unit: CellMetricUnit, value: number | null): string {
  if (unit === "ms") return formatMs(value);
  if (unit === "ratio") return formatPercent(value);
  if (unit === "usd") return formatCost(value);
  return formatInt(value);
}

function signOf(value: number): string {
  return value > 0 ? "+" : value < 0 ? "−" : "±";
}

export function formatCellDelta(row: CellMetricDelta): string {
  if (row.delta === null) return "—";
  const magnitude = Math.abs(row.delta);
  if (row.unit === "ratio") return `${signOf(row.delta)}${(magnitude * 100).toFixed(1)} pp`;
  return `${signOf(row.delta)}${formatCellMetric(row.unit, magnitude)}`;
}

export function formatRelativeChange(percent: number | null): string {
  if (percent === null) return "—";
  return `${signOf(percent)}${(Math.abs(percent) * 100).toFixed(1)}%`;
}

export type RunOutcome = "passed" | "failed" | "incomplete";

export function runOutcome(run: CellRun): RunOutcome {
  if (run.incomplete || run.score === null) return "incomplete";
  return run.score.success ? "passed" : "failed";
}

/**
 * Each run once, at the place it was first listed, as its latest page says it stands: while runs
 * end, one may move from one outcome to another between two pages of a failed-first list.
 */
export function onceEach(items: readonly CellRun[]): CellRun[] {
  const latest = new Map<string, CellRun>();
  for (const run of items) latest.set(run.session_id, run);
  const listed = new Set<string>();
  const runs: CellRun[] = [];
  for (const run of items) {
    if (listed.has(run.session_id)) continue;
    listed.add(run.session_id);
    runs.push(latest.get(run.session_id) ?? run);
  }
  return runs;
}
