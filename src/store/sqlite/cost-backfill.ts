import type Database from "better-sqlite3";
import { sessionPrices, tableCost } from "../../domain/call-pricing.js";
import type { PriceTable } from "../../domain/prices.js";
import type { AgentRole, TokenUsage } from "../../domain/usage.js";

interface UnpricedRow extends TokenUsage {
  id: number;
  session_id: string;
  agent: AgentRole;
}

interface SessionPricing {
  config: Record<string, unknown>;
  prices: PriceTable;
}

/** Rows read per step: bounded memory on a file of any size, few round trips. */
const PAGE = 5_000;

/**
 * Gives every model call stored before the lab recorded costs the price table's estimate, as the
 * runtime gives a new call (call-pricing.ts: the agent's configured model, the session's prices):
 * otherwise an old row would read "unpriced" in `usage`, the API and the UI while an experiment
 * report priced it. A model the table does not know stays NULL, honestly unpriced, and so does a
 * row whose session is gone. Run inside the migration's transaction: one pass in id order, each
 * session's config parsed once.
 */
export function backfillTableCosts(db: Database.Database): void {
  const page = db.prepare<[number], UnpricedRow>(`
    SELECT id, session_id, agent, prompt_tokens, completion_tokens, total_tokens, cached_tokens,
      reasoning_tokens, cache_write_tokens
    FROM usage_stats
    WHERE id > ? AND call_kind != 'tool_execution' AND cost_estimated_usd IS NULL AND cost_usd IS NULL
    ORDER BY id LIMIT ${PAGE}`);
  const configOf = db.prepare<[string], string>("SELECT config_json FROM sessions WHERE id = ?");
  const update = db.prepare("UPDATE usage_stats SET cost_estimated_usd = ? WHERE id = ?");
  const sessions = new Map<string, SessionPricing | null>();
  const pricingOf = (sessionId: string): SessionPricing | null => {
    if (!sessions.has(sessionId))
      sessions.set(sessionId, readPricing(configOf.pluck().get(sessionId)));
    return sessions.get(sessionId) ?? null;
  };
  let after = 0;
  for (;;) {
    const rows = page.all(after);
    for (const row of rows) {
      const pricing = pricingOf(row.session_id);
      const cost =
        pricing === null ? null : tableCost(row, pricing.config, row.agent, pricing.prices);
      if (cost !== null) update.run(cost, row.id);
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < PAGE) return;
    after = last.id;
  }
}

function readPricing(configJson: string | undefined): SessionPricing | null {
  if (configJson === undefined) return null;
  let config: unknown;
  try {
    config = JSON.parse(configJson);
  } catch {
    return null;
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) return null;
  const record = config as Record<string, unknown>;
  return { config: record, prices: sessionPrices(record) };
}
