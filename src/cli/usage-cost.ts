import type { UsageCallRecord, UsageRollup } from "../domain/usage.js";
import { callCost } from "../domain/usage.js";
import { formatCost } from "../experiments/report-format.js";

/**
 * How the CLI says what calls cost: the figure and where it comes from, since a provider's own
 * price (`reported`) and the lab's price table (`est.`) are not equally trustworthy.
 */

/** `$0.0012 reported`, `$0.0012 est.`; `–` when the call has no price. Tool executions are free. */
export function callCostText(call: UsageCallRecord): string {
  if (call.call_kind === "tool_execution") return "–";
  const cost = callCost(call);
  if (cost.usd === null) return "?";
  return `${formatCost(cost.usd)} ${cost.source === "reported" ? "reported" : "est."}`;
}

/**
 * A roll-up's cost: `reported` when the provider priced every priced call, `est.` when the table
 * did, `mixed` when both; a trailing `+?` says some model calls have no price (the sum is short).
 */
export function rollupCostText(rollup: UsageRollup): string {
  const unpriced = rollup.unpriced_count > 0 ? "+?" : "";
  if (rollup.cost_usd === null) return rollup.unpriced_count > 0 ? "?" : "–";
  const priced = rollup.call_count - rollup.tool_count - rollup.unpriced_count;
  const source =
    rollup.reported_cost_count === 0
      ? "est."
      : rollup.reported_cost_count >= priced
        ? "reported"
        : "mixed";
  return `${formatCost(rollup.cost_usd)}${unpriced} ${source}`;
}

/**
 * Whether the endpoint answered with another model than the one asked for. A dated snapshot of
 * the requested name ("gpt-4o" → "gpt-4o-2024-08-06") is the same model; a router's choice is not.
 */
export function servedByAnother(requested: string | undefined, served: string | null): boolean {
  if (served === null || requested === undefined) return false;
  const name = requested.slice(requested.indexOf(":") + 1);
  return !(served === name || served === requested || served.startsWith(`${name}-`));
}
