import { estimateCost, PriceTable, priceFor } from "./prices.js";
import { eventAgentFollowsChatAgent } from "./session-config.js";
import type { AgentRole, TokenUsage } from "./usage.js";

/**
 * Which model a call is priced at, the same for every face and every age of row: the model
 * string its agent is configured with in the session's config (the one a suite's or session's
 * `prices` name), never the model the endpoint says answered. The runtime prices a call as it
 * records it; a row stored before costs were recorded (an upgraded database, a version-1 export)
 * is priced by the same rule when it is upgraded or imported, and a report prices any row still
 * without a figure by it too, so `usage`, the API, the UI and experiment reports agree.
 */

/** The endpoint an agent's calls went to, from a stored config (validated or not). */
export interface CallEndpoint {
  model: string;
  base_url: string | null;
}

/**
 * The agent's endpoint in a stored config. Event agent and event kernel calls are the event
 * agent's; a config without an event agent gives it the chat agent's endpoint, as a session run
 * from it does (`eventAgentFollowsChatAgent`); a missing model is the simulated one.
 */
export function callEndpoint(config: Record<string, unknown>, agent: AgentRole): CallEndpoint {
  const filled = eventAgentFollowsChatAgent(config) as Record<string, unknown>;
  const entry = filled[agent === "chat_agent" ? "chat_agent" : "event_agent"];
  const fields =
    entry !== null && typeof entry === "object" ? (entry as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null);
  return { model: text(fields.model) ?? "sim", base_url: text(fields.base_url) };
}

/** A stored config's own price overrides; a config without valid ones has none. */
export function sessionPrices(config: Record<string, unknown>): PriceTable {
  const parsed = PriceTable.safeParse(config.prices ?? {});
  return parsed.success ? parsed.data : {};
}

/**
 * The price table's USD for one call of `agent` under `config`, with `prices` over the built-in
 * table (by default the session's own). Null when the table does not know the model.
 */
export function tableCost(
  usage: TokenUsage,
  config: Record<string, unknown>,
  agent: AgentRole,
  prices: PriceTable = sessionPrices(config),
): number | null {
  return estimateCost(usage, priceFor(callEndpoint(config, agent).model, prices));
}
