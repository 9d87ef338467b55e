import type { Cell, CellSummary, RunResult } from "../domain/experiment.js";
import { type CostFigure, sumCosts } from "./run-cost.js";
import { percentile, wilsonInterval } from "./statistics.js";

/**
 * One cell's numbers over its runs, folded in one run at a time (`CellFold`), so a report need not
 * keep its runs to summarize them:
 * - success rate with its 95 % Wilson interval, and per category;
 * - ttft and wall time percentiles over the runs' turns (ttft of each turn's first chat call;
 *   turns without a measurement are left out; null when none has one). The fold keeps each
 *   turn's two latencies as plain numbers (16 bytes a turn, under 2 MB at 50,000 runs), so the
 *   percentiles are exact: a sketch would make the report differ from one built from the runs;
 * - tokens per turn, and the share of prompt tokens served from cache;
 * - fallback rate = argument fallbacks / tool executions; tool error rate = tool calls whose reply
 *   was an error / tool calls with a reply (0 when there are none);
 * - cost: the sum of the runs' costs, null when any run's cost is unknown, with its source
 *   (reported by the providers, estimated by the price table, mixed, or unknown); summed in the
 *   order the runs were folded in.
 */
export class CellFold {
  readonly #cell: Pick<Cell, "id" | "label">;
  #runs = 0;
  #successes = 0;
  #turns = 0;
  #totalTokens = 0;
  #cachedTokens = 0;
  #promptTokens = 0;
  #fallbacks = 0;
  #toolExecutions = 0;
  #answered = 0;
  #failedTools = 0;
  readonly #ttfts: number[] = [];
  readonly #walls: number[] = [];
  readonly #costs: CostFigure[] = [];
  readonly #byCategory: CellSummary["by_category"] = {};

  constructor(cell: Pick<Cell, "id" | "label">) {
    this.#cell = cell;
  }

  add(run: RunResult): void {
    this.#runs += 1;
    if (run.score.success) this.#successes += 1;
    const entry = this.#byCategory[run.category] ?? { runs: 0, successes: 0 };
    entry.runs++;
    if (run.score.success) entry.successes++;
    this.#byCategory[run.category] = entry;
    this.#costs.push({ cost_usd: run.cost_usd, cost_source: run.cost_source });
    for (const turn of run.turns) {
      this.#turns += 1;
      this.#totalTokens += turn.total_tokens;
      this.#cachedTokens += turn.cached_tokens;
      this.#promptTokens += turn.prompt_tokens;
      this.#fallbacks += turn.fallback_count;
      this.#toolExecutions += turn.tool_count;
      if (turn.ttft_ms !== null) this.#ttfts.push(turn.ttft_ms);
      if (turn.wall_time_ms !== null) this.#walls.push(turn.wall_time_ms);
      for (const call of turn.tool_calls) {
        if (call.ok === null) continue;
        this.#answered += 1;
        if (call.ok === false) this.#failedTools += 1;
      }
    }
  }

  summary(): CellSummary {
    const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
    const cost = sumCosts(this.#costs);
    return {
      cell: this.#cell.id,
      label: this.#cell.label,
      runs: this.#runs,
      successes: this.#successes,
      success_rate: ratio(this.#successes, this.#runs),
      success_ci: wilsonInterval(this.#successes, this.#runs),
      ttft_p50_ms: percentile(this.#ttfts, 50),
      ttft_p95_ms: percentile(this.#ttfts, 95),
      wall_p50_ms: percentile(this.#walls, 50),
      wall_p95_ms: percentile(this.#walls, 95),
      tokens_per_turn: ratio(this.#totalTokens, this.#turns),
      cached_share: ratio(this.#cachedTokens, this.#promptTokens),
      fallback_rate: ratio(this.#fallbacks, this.#toolExecutions),
      tool_error_rate: ratio(this.#failedTools, this.#answered),
      cost_usd: cost.cost_usd,
      cost_source: cost.cost_source,
      by_category: Object.fromEntries(
        Object.entries(this.#byCategory).map(([category, entry]) => [category, { ...entry }]),
      ),
    };
  }
}

/** One cell's numbers over its runs (pass only that cell's runs); see CellFold. */
export function summarizeCell(cell: Pick<Cell, "id" | "label">, runs: RunResult[]): CellSummary {
  const fold = new CellFold(cell);
  for (const run of runs) fold.add(run);
  return fold.summary();
}
