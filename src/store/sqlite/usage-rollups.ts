import type Database from "better-sqlite3";
import {
  emptyUsageRollup,
  sumOfMilliseconds,
  type TurnUsageRollup,
  type UsageRollup,
} from "../../domain/usage.js";

interface TurnAggregateRow {
  turn_index: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  elapsed_ms: number;
  call_count: number;
  fallback_count: number;
  tool_count: number;
  estimated_count: number;
  reasoning_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
  reported_cost_count: number;
  unpriced_count: number;
}

/**
 * A call's cost is the provider's figure where it reported one, else the price table's (usage.ts
 * `callCost`); SQL's SUM over only NULLs is NULL, which is the "no call has a cost" of UsageRollup.
 * Turn roll-ups come from one GROUP BY over the session's calls; the session roll-up is the sum of
 * the turns, computed here rather than by a second scan. Grouping the calls by themselves, and
 * joining turns only for the wall time, is what keeps totals from being multiplied by a join.
 */
export const AGGREGATE_COLUMNS = `
         SUM(prompt_tokens) AS prompt_tokens,
         SUM(completion_tokens) AS completion_tokens,
         SUM(total_tokens) AS total_tokens,
         SUM(cached_tokens) AS cached_tokens,
         SUM(elapsed_ms) AS elapsed_ms,
         COUNT(*) AS call_count,
         SUM(call_kind = 'argument_fallback') AS fallback_count,
         SUM(call_kind = 'tool_execution') AS tool_count,
         SUM(estimated) AS estimated_count,
         SUM(reasoning_tokens) AS reasoning_tokens,
         SUM(cache_write_tokens) AS cache_write_tokens,
         SUM(COALESCE(cost_usd, cost_estimated_usd)) AS cost_usd,
         SUM(cost_usd IS NOT NULL) AS reported_cost_count,
         SUM(call_kind != 'tool_execution' AND cost_usd IS NULL AND cost_estimated_usd IS NULL)
           AS unpriced_count`;

const ROLLUP_COLUMNS = `prompt_tokens, completion_tokens, total_tokens, cached_tokens,
  elapsed_ms, call_count, fallback_count, tool_count, estimated_count, reasoning_tokens,
  cache_write_tokens, cost_usd, reported_cost_count, unpriced_count`;

export const TURN_AGGREGATE_SQL = `
  SELECT turn_index, ${AGGREGATE_COLUMNS}
  FROM usage_stats WHERE session_id = ? GROUP BY turn_index ORDER BY turn_index`;

/** The turns' roll-ups as SQLite keeps them while calls are recorded (turn-usage.ts). */
const TURN_USAGE_SQL = `
  SELECT turn_index, ${ROLLUP_COLUMNS}
  FROM turn_usage WHERE session_id = ? ORDER BY turn_index`;

const ONE_TURN_USAGE_SQL = `
  SELECT ${ROLLUP_COLUMNS} FROM turn_usage WHERE session_id = ? AND turn_index = ?`;

/** ONE_TURN_USAGE_SQL's row as values, in ROLLUP_COLUMNS order (cost_usd may be null). */
type RollupValues = [
  prompt_tokens: number,
  completion_tokens: number,
  total_tokens: number,
  cached_tokens: number,
  elapsed_ms: number,
  call_count: number,
  fallback_count: number,
  tool_count: number,
  estimated_count: number,
  reasoning_tokens: number,
  cache_write_tokens: number,
  cost_usd: number | null,
  reported_cost_count: number,
  unpriced_count: number,
];

export class UsageRollups {
  private readonly aggregates: Database.Statement<[string], TurnAggregateRow>;
  /** Read as values: a turn's end reads it, and a row object of 14 keys cost a third of it. */
  private readonly oneTurn: Database.Statement<[string, number], RollupValues>;
  private readonly wallTime: Database.Statement<[string, number], { wall_time_ms: number | null }>;
  private readonly wallTimes: Database.Statement<
    [string],
    { turn_index: number; wall_time_ms: number | null }
  >;

  constructor(db: Database.Database) {
    this.aggregates = db.prepare(TURN_USAGE_SQL);
    this.oneTurn = db.prepare<[string, number], RollupValues>(ONE_TURN_USAGE_SQL).raw();
    this.wallTime = db.prepare(
      "SELECT wall_time_ms FROM turns WHERE session_id = ? AND turn_index = ?",
    );
    this.wallTimes = db.prepare(
      "SELECT turn_index, wall_time_ms FROM turns WHERE session_id = ? ORDER BY turn_index",
    );
  }

  /**
   * One turn's roll-up from its own calls (what a turn's end reports), costing the turn's rows
   * however long the session is; zeros until it records a call.
   */
  turn(
    sessionId: string,
    turnIndex: number,
    /** The turn's wall time when the caller has just written it (one read fewer). */
    written?: { wall_time_ms: number | null },
  ): TurnUsageRollup {
    const row = this.oneTurn.get(sessionId, turnIndex);
    const turn_wall_time_ms =
      (written ?? this.wallTime.get(sessionId, turnIndex))?.wall_time_ms ?? null;
    if (row === undefined) {
      return { turn_index: turnIndex, ...emptyUsageRollup(), turn_wall_time_ms };
    }
    return {
      turn_index: turnIndex,
      prompt_tokens: row[0],
      completion_tokens: row[1],
      total_tokens: row[2],
      cached_tokens: row[3],
      elapsed_ms: sumOfMilliseconds(row[4]),
      call_count: row[5],
      fallback_count: row[6],
      tool_count: row[7],
      estimated_count: row[8],
      reasoning_tokens: row[9],
      cache_write_tokens: row[10],
      cost_usd: row[11],
      reported_cost_count: row[12],
      unpriced_count: row[13],
      turn_wall_time_ms,
    };
  }

  /** Every started turn appears, with zeros until it records a call. */
  turns(sessionId: string): TurnUsageRollup[] {
    const byTurn = new Map<number, TurnUsageRollup>();
    for (const row of this.aggregates.iterate(sessionId)) {
      const elapsed_ms = sumOfMilliseconds(row.elapsed_ms);
      byTurn.set(row.turn_index, { ...row, elapsed_ms, turn_wall_time_ms: null });
    }
    for (const { turn_index, wall_time_ms } of this.wallTimes.iterate(sessionId)) {
      const turn = byTurn.get(turn_index) ?? { turn_index, ...emptyUsageRollup() };
      turn.turn_wall_time_ms = wall_time_ms;
      byTurn.set(turn_index, turn);
    }
    return [...byTurn.values()].sort((a, b) => a.turn_index - b.turn_index);
  }
}

/** `turn_wall_time_ms` and `cost_usd` stay null until some turn has one. */
export function sumRollups(turns: readonly UsageRollup[]): UsageRollup {
  const session = emptyUsageRollup();
  for (const turn of turns) {
    session.prompt_tokens += turn.prompt_tokens;
    session.completion_tokens += turn.completion_tokens;
    session.total_tokens += turn.total_tokens;
    session.cached_tokens += turn.cached_tokens;
    session.elapsed_ms += turn.elapsed_ms;
    session.call_count += turn.call_count;
    session.fallback_count += turn.fallback_count;
    session.tool_count += turn.tool_count;
    session.estimated_count += turn.estimated_count;
    session.reasoning_tokens += turn.reasoning_tokens;
    session.cache_write_tokens += turn.cache_write_tokens;
    session.reported_cost_count += turn.reported_cost_count;
    session.unpriced_count += turn.unpriced_count;
    if (turn.cost_usd !== null) session.cost_usd = (session.cost_usd ?? 0) + turn.cost_usd;
    if (turn.turn_wall_time_ms !== null) {
      session.turn_wall_time_ms = (session.turn_wall_time_ms ?? 0) + turn.turn_wall_time_ms;
    }
  }
  session.elapsed_ms = sumOfMilliseconds(session.elapsed_ms);
  if (session.turn_wall_time_ms !== null) {
    session.turn_wall_time_ms = sumOfMilliseconds(session.turn_wall_time_ms);
  }
  return session;
}
