import { type CellSummary, type CostSource, ScenarioCategory } from "../domain/experiment.js";
import { formatDuration } from "../domain/number-format.js";

/** The number formats every report face shares, so the table and the HTML say the same. */

export const SIMULATED_NOTE =
  "simulated model: these numbers show the machinery, not a model's quality";

/** 0.923 → `92%`; under 10% one decimal (`2.5%`); null → `–`. */
export function formatPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return "–";
  const percent = share * 100;
  if (percent > 0 && percent < 10) return `${Number(percent.toFixed(1))}%`;
  return `${Math.round(percent)}%`;
}

/** `92% [82–96]`: the success rate and its 95% interval; `–` without runs. */
export function formatSuccess(
  cell: Pick<CellSummary, "runs" | "success_rate" | "success_ci">,
): string {
  if (cell.runs === 0) return "–";
  const [low, high] = cell.success_ci;
  return `${formatPercent(cell.success_rate)} [${Math.round(low * 100)}–${Math.round(high * 100)}]`;
}

/** `12 ms`, `3.4 ms`, `1.24 s`; `–` when there is no measurement (src/domain/number-format.ts). */
export function formatMilliseconds(ms: number | null | undefined): string {
  return formatDuration(ms);
}

/** `120/340 ms`-style pair of percentiles: `p50 / p95`. */
export function formatPercentiles(p50: number | null, p95: number | null): string {
  if (p50 === null && p95 === null) return "–";
  return `${formatMilliseconds(p50)} / ${formatMilliseconds(p95)}`;
}

/** 1234.5 → `1,235`. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString("en-US");
}

/**
 * USD: `$0.0123`, `$4.56`; one small call's `$0.000042`, and `<$0.000001` below that; null (no
 * price known) → `–`.
 */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "–";
  if (usd === 0) return "$0";
  if (usd < 0.000_001) return "<$0.000001";
  if (usd < 0.0001) return `$${usd.toFixed(6)}`;
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

const SOURCE_LABEL: Record<CostSource, string> = {
  reported: "reported",
  estimated: "est.",
  mixed: "mixed",
  unknown: "unknown",
};

/** `$0.0123 est.`, `$1.20 reported`, `$0.40 mixed`; `unknown` when some call had no price. */
export function formatCostWithSource(cost: Pick<CellSummary, "cost_usd" | "cost_source">): string {
  if (cost.cost_usd === null || cost.cost_source === "unknown") return SOURCE_LABEL.unknown;
  return `${formatCost(cost.cost_usd)} ${SOURCE_LABEL[cost.cost_source]}`;
}

export const COST_NOTE =
  "cost: reported = the providers' own prices; est. = the price table (built-in list prices, the suite's prices:); mixed = both; unknown = a call had neither";

export interface CategoryScore {
  category: string;
  runs: number;
  successes: number;
}

/** A cell's per-category counts, categories in the schema's order (unknown ones last). */
export function categoryScores(cell: Pick<CellSummary, "by_category">): CategoryScore[] {
  const known: readonly string[] = ScenarioCategory.options;
  return Object.entries(cell.by_category)
    .map(([category, counts]) => ({ category, ...counts }))
    .sort(
      (left, right) =>
        rank(known, left.category) - rank(known, right.category) ||
        left.category.localeCompare(right.category),
    );
}

function rank(known: readonly string[], category: string): number {
  const index = known.indexOf(category);
  return index === -1 ? known.length : index;
}

/** Every category any cell ran, in the schema's order. */
export function reportCategories(cells: readonly Pick<CellSummary, "by_category">[]): string[] {
  const seen = new Set<string>();
  for (const cell of cells) for (const score of categoryScores(cell)) seen.add(score.category);
  const merged = [...seen].map((category) => ({ category, runs: 0, successes: 0 }));
  return categoryScores({
    by_category: Object.fromEntries(merged.map((score) => [score.category, score])),
  }).map((score) => score.category);
}
