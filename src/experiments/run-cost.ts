import { tableCost } from "../domain/call-pricing.js";
import type { CostSource } from "../domain/experiment.js";
import type { Price } from "../domain/prices.js";
import type { SessionRecord } from "../domain/records.js";
import { callCost, tokenUsage } from "../domain/usage.js";
import type { ScoringCall } from "../store/experiment-records.js";
import type { SessionStore } from "../store/session-store.js";

/**
 * What a run cost, from its usage rows, and where the figure comes from. Each model call counts
 * with `callCost` (the provider's reported price wins, else the price table's estimate the runtime
 * recorded); a call recorded without either (a store upgrades and imports fill the estimate in,
 * so this is a row the table did not know then) is priced here by the same rule
 * (call-pricing.ts), with the suite's prices over the built-in ones.
 * Tool executions cost nothing. One call without any price makes the run's cost unknown: a sum
 * that silently leaves calls out would look cheaper than it was.
 */
export interface CostFigure {
  cost_usd: number | null;
  cost_source: CostSource;
}

export function callsCost(
  calls: readonly ScoringCall[],
  config: Record<string, unknown>,
  prices: Record<string, Price>,
): CostFigure {
  const figures: CostFigure[] = calls
    .filter((call) => call.call_kind !== "tool_execution")
    .map((call) => {
      const recorded = callCost(call);
      if (recorded.usd !== null) {
        return { cost_usd: recorded.usd, cost_source: recorded.source ?? "estimated" };
      }
      const usd = tableCost(tokenUsage(call), config, call.agent, prices);
      return usd === null
        ? { cost_usd: null, cost_source: "unknown" }
        : { cost_usd: usd, cost_source: "estimated" };
    });
  return sumCosts(figures);
}

/**
 * The sum of several costs: unknown when any is; `reported` or `estimated` when all agree,
 * `mixed` otherwise. Nothing to sum costs $0, by the table.
 */
export function sumCosts(figures: readonly CostFigure[]): CostFigure {
  if (figures.some((figure) => figure.cost_usd === null || figure.cost_source === "unknown")) {
    return { cost_usd: null, cost_source: "unknown" };
  }
  const [first, ...others] = new Set(figures.map((figure) => figure.cost_source));
  const cost_source: CostSource = others.length > 0 ? "mixed" : (first ?? "estimated");
  const cost_usd = figures.reduce((total, figure) => total + (figure.cost_usd ?? 0), 0);
  return { cost_usd, cost_source };
}

/** A stored run's cost, read from its session's usage rows. */
export async function storedRunCost(
  store: SessionStore,
  session: SessionRecord,
  prices: Record<string, Price>,
): Promise<CostFigure> {
  const { calls } = await store.usageSummary(session.id);
  return callsCost(calls, session.config, prices);
}
