import type { TableLayout } from "./schema.js";

/**
 * Version 5: each turn's usage roll-up, kept as calls are recorded, so a session's roll-ups cost
 * its turns, not its calls (a GROUP BY over a million calls took seconds on every `/usage`).
 * SQLite keeps it, in the writer's transaction, whoever inserts a call (appendUsage,
 * appendRecords, an import, an older build's statements); the sums are the same as
 * usage-rollups.ts's GROUP BY over the calls, which the migration uses to fill it.
 */

const COUNTS = [
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "cached_tokens",
  "elapsed_ms",
  "call_count",
  "fallback_count",
  "tool_count",
  "estimated_count",
  "reasoning_tokens",
  "cache_write_tokens",
  "reported_cost_count",
  "unpriced_count",
] as const;

export const TURN_USAGE_TABLE: TableLayout = {
  name: "turn_usage",
  create: `CREATE TABLE IF NOT EXISTS turn_usage (
    session_id TEXT NOT NULL,
    turn_index INTEGER NOT NULL,
    ${COUNTS.map((name) => `${name} INTEGER NOT NULL DEFAULT 0`).join(",\n    ")},
    cost_usd REAL,
    PRIMARY KEY (session_id, turn_index)
  ) WITHOUT ROWID`,
  columns: [],
};

/** One call's contribution, as the aggregate columns of usage-rollups.ts count it. */
const CALL_COUNTS: Record<(typeof COUNTS)[number], string> = {
  prompt_tokens: "NEW.prompt_tokens",
  completion_tokens: "NEW.completion_tokens",
  total_tokens: "NEW.total_tokens",
  cached_tokens: "NEW.cached_tokens",
  elapsed_ms: "NEW.elapsed_ms",
  call_count: "1",
  fallback_count: "NEW.call_kind = 'argument_fallback'",
  tool_count: "NEW.call_kind = 'tool_execution'",
  estimated_count: "NEW.estimated",
  reasoning_tokens: "NEW.reasoning_tokens",
  cache_write_tokens: "NEW.cache_write_tokens",
  reported_cost_count: "NEW.cost_usd IS NOT NULL",
  unpriced_count:
    "NEW.call_kind != 'tool_execution' AND NEW.cost_usd IS NULL AND NEW.cost_estimated_usd IS NULL",
};

export const TURN_USAGE_TRIGGER = `CREATE TRIGGER IF NOT EXISTS usage_stats_turn_usage AFTER INSERT ON usage_stats BEGIN
  INSERT INTO turn_usage (session_id, turn_index, ${COUNTS.join(", ")}, cost_usd)
  VALUES (NEW.session_id, NEW.turn_index, ${COUNTS.map((name) => `(${CALL_COUNTS[name]})`).join(", ")},
    COALESCE(NEW.cost_usd, NEW.cost_estimated_usd))
  ON CONFLICT (session_id, turn_index) DO UPDATE SET
    ${COUNTS.map((name) => `${name} = ${name} + excluded.${name}`).join(",\n    ")},
    -- NULL until some call has a cost, as SUM over only NULLs is.
    cost_usd = CASE WHEN excluded.cost_usd IS NULL THEN cost_usd
      ELSE COALESCE(cost_usd, 0) + excluded.cost_usd END;
END`;

/** Fills the table from the calls themselves (an upgrade, or rows deleted by the migration). */
export function rebuildTurnUsage(aggregateColumns: string): string[] {
  return [
    "DELETE FROM turn_usage",
    `INSERT INTO turn_usage (session_id, turn_index, ${COUNTS.join(", ")}, cost_usd)
      SELECT session_id, turn_index, ${COUNTS.join(", ")}, cost_usd FROM (
        SELECT session_id, turn_index, ${aggregateColumns}
        FROM usage_stats GROUP BY session_id, turn_index)`,
  ];
}
