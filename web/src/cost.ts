/**
 * Money as the UI shows it: a call's or a rollup's USD and, always beside it, where the figure
 * comes from (the provider's report, the lab's price table, a mix, or nothing known).
 */
import type { UsageCallRecord, UsageRollup } from "./api-types.js";

/** "$0", "<$0.0001", "$0.0123", "$0.50", "$12.35"; "—" when unknown. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "—";
  if (usd === 0) return "$0";
  const sign = usd < 0 ? "−" : "";
  const abs = Math.abs(usd);
  if (abs < 0.0001) return `${sign}<$0.0001`;
  if (abs >= 1) return `${sign}$${abs.toFixed(2)}`;
  // Four decimals show a cheap call's cost; trailing zeros beyond cents say nothing.
  const [whole, fraction = ""] = abs.toFixed(4).split(".");
  return `${sign}$${whole}.${fraction.replace(/0+$/, "").padEnd(2, "0")}`;
}

export type CostSource = "reported" | "estimated" | "mixed" | "unknown" | "none";
/** What the experiment report says of a run or cell (domain/experiment.ts). */
export type ExperimentCostSource = "reported" | "estimated" | "mixed" | "unknown";

export interface CostLabel {
  usd: number | null;
  /** The amount, formatted. */
  amount: string;
  source: CostSource;
  /** The short word shown beside the amount ("" when there is nothing to say). */
  text: string;
  /** The tooltip: where the number comes from. */
  title: string;
}

const REPORTED_TITLE = "Reported by the provider for this call (its usage.cost).";
const ESTIMATED_TITLE =
  "Estimated with the lab's price table (input, cached input, cache writes, output and reasoning tokens at the model's listed prices); the provider reported no cost.";

/**
 * A call's cost as the lab's `callCost` picks it: the provider's figure when it reported one,
 * else the price table's. Tool executions cost nothing and carry no label.
 */
export function callCostLabel(
  call: Pick<UsageCallRecord, "cost_usd" | "cost_estimated_usd" | "call_kind">,
): CostLabel {
  if (call.call_kind === "tool_execution") {
    return {
      usd: null,
      amount: "—",
      source: "none",
      text: "",
      title: "A tool execution: no model was called.",
    };
  }
  if (call.cost_usd !== null) {
    return {
      usd: call.cost_usd,
      amount: formatCost(call.cost_usd),
      source: "reported",
      text: "reported",
      title: REPORTED_TITLE,
    };
  }
  if (call.cost_estimated_usd !== null) {
    return {
      usd: call.cost_estimated_usd,
      amount: formatCost(call.cost_estimated_usd),
      source: "estimated",
      text: "estimated",
      title: ESTIMATED_TITLE,
    };
  }
  return {
    usd: null,
    amount: "—",
    source: "unknown",
    text: "unpriced",
    title:
      "No cost known: the provider reported none and the model is not in the price table (add it to the session's `prices`).",
  };
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

/**
 * A rollup's cost and its source: all reported, all estimated, a mix, or unknown. A rollup whose
 * priced calls leave some model calls unpriced is "partly unpriced": its sum is too low.
 */
export function rollupCostLabel(
  rollup: Pick<
    UsageRollup,
    "cost_usd" | "reported_cost_count" | "unpriced_count" | "call_count" | "tool_count"
  >,
): CostLabel {
  const modelCalls = Math.max(0, rollup.call_count - rollup.tool_count);
  const unpriced = Math.min(rollup.unpriced_count, modelCalls);
  if (modelCalls === 0) {
    return { usd: null, amount: "—", source: "none", text: "", title: "No model calls." };
  }
  if (rollup.cost_usd === null || unpriced === modelCalls) {
    return {
      usd: null,
      amount: "—",
      source: "unknown",
      text: "unpriced",
      title: `No cost known for ${plural(modelCalls, "model call")}: no provider report, and the model is not in the price table.`,
    };
  }
  const reported = Math.min(rollup.reported_cost_count, modelCalls - unpriced);
  const estimated = modelCalls - unpriced - reported;
  const source: CostSource =
    reported > 0 && estimated > 0 ? "mixed" : reported > 0 ? "reported" : "estimated";
  const parts: string[] = [];
  if (reported > 0) parts.push(`${plural(reported, "call")} reported by the provider`);
  if (estimated > 0) parts.push(`${plural(estimated, "call")} estimated with the price table`);
  if (unpriced > 0) parts.push(`${plural(unpriced, "call")} with no known price (not counted)`);
  const text = unpriced > 0 ? `${source} · partly unpriced` : source;
  return {
    usd: rollup.cost_usd,
    amount: formatCost(rollup.cost_usd),
    source,
    text,
    title: `${parts.join("; ")}.`,
  };
}

const EXPERIMENT_TITLES: Record<"reported" | "estimated" | "mixed", string> = {
  reported: "Reported by the provider for every model call of the run(s) (its usage.cost).",
  estimated:
    "Estimated: every model call priced with the lab's price table (the built-in prices plus the suite's `prices`); no provider reported a cost.",
  mixed:
    "Mixed: the provider's reported cost where it sent one, the price table's estimate for the other calls.",
};

/**
 * An experiment's cost (a cell's or a run's), labelled with the source the report gives it:
 * each call's provider-reported cost where there is one, else the price table's estimate.
 */
export function experimentCostLabel(
  usd: number | null,
  source: ExperimentCostSource,
  runs = 1,
): CostLabel {
  if (runs === 0) return { usd: null, amount: "—", source: "none", text: "", title: "Not run." };
  if (usd === null || source === "unknown") {
    return {
      usd: null,
      amount: "—",
      source: "unknown",
      text: "unpriced",
      title:
        "No cost: some model call has neither a provider-reported cost nor a price in the table (add its model to the suite's `prices`).",
    };
  }
  return {
    usd,
    amount: formatCost(usd),
    source,
    text: source,
    title: EXPERIMENT_TITLES[source],
  };
}
