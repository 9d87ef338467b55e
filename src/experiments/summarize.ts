import type { Cell, CellSummary, RunResult } from "../domain/experiment.js";
import { sumCosts } from "./run-cost.js";
import { percentile, wilsonInterval } from "./statistics.js";

/**
 * One cell's numbers over its runs (pass only that cell's runs):
 * - success rate with its 95 % Wilson interval, and per category;
 * - ttft and wall time percentiles over the runs' turns (ttft of each turn's first chat call;
 *   turns without a measurement are left out; null when none has one);
 * - tokens per turn, and the share of prompt tokens served from cache;
 * - fallback rate = argument fallbacks / tool executions; tool error rate = tool calls whose reply
 *   was an error / tool calls with a reply (0 when there are none);
 * - cost: the sum of the runs' costs, null when any run's cost is unknown, with its source
 *   (reported by the providers, estimated by the price table, mixed, or unknown).
 */
export function summarizeCell(cell: Pick<Cell, "id" | "label">, runs: RunResult[]): CellSummary {
  const turns = runs.flatMap((run) => run.turns);
  const successes = runs.filter((run) => run.score.success).length;
  const sum = (pick: (turn: (typeof turns)[number]) => number) =>
    turns.reduce((total, turn) => total + pick(turn), 0);
  const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

  const ttfts = turns.flatMap((turn) => (turn.ttft_ms === null ? [] : [turn.ttft_ms]));
  const walls = turns.flatMap((turn) => (turn.wall_time_ms === null ? [] : [turn.wall_time_ms]));
  const answered = turns.flatMap((turn) => turn.tool_calls).filter((call) => call.ok !== null);
  const failedTools = answered.filter((call) => call.ok === false).length;

  const by_category: CellSummary["by_category"] = {};
  for (const run of runs) {
    const entry = by_category[run.category] ?? { runs: 0, successes: 0 };
    entry.runs++;
    if (run.score.success) entry.successes++;
    by_category[run.category] = entry;
  }
  const cost = sumCosts(runs);

  return {
    cell: cell.id,
    label: cell.label,
    runs: runs.length,
    successes,
    success_rate: ratio(successes, runs.length),
    success_ci: wilsonInterval(successes, runs.length),
    ttft_p50_ms: percentile(ttfts, 50),
    ttft_p95_ms: percentile(ttfts, 95),
    wall_p50_ms: percentile(walls, 50),
    wall_p95_ms: percentile(walls, 95),
    tokens_per_turn: ratio(
      sum((turn) => turn.total_tokens),
      turns.length,
    ),
    cached_share: ratio(
      sum((turn) => turn.cached_tokens),
      sum((turn) => turn.prompt_tokens),
    ),
    fallback_rate: ratio(
      sum((turn) => turn.fallback_count),
      sum((turn) => turn.tool_count),
    ),
    tool_error_rate: ratio(failedTools, answered.length),
    cost_usd: cost.cost_usd,
    cost_source: cost.cost_source,
    by_category,
  };
}
