import type pg from "pg";
import { emptyUsageRollup, sumOfMilliseconds, type TurnUsageRollup } from "../../domain/usage.js";
import { run } from "./queries.js";

type RollupRow = Omit<TurnUsageRollup, "turn_wall_time_ms">;

/**
 * The turns' usage roll-ups, from turn_usage (kept by a trigger as calls are recorded,
 * triggers.ts): a session's roll-ups cost its turns, not its calls. Every started turn appears,
 * zeros until it records a call; `turnIndex` narrows it to one turn (zeros when it has none).
 */
export async function turnRollups(
  db: pg.Pool | pg.ClientBase,
  sessionId: string,
  turnIndex: number | null = null,
): Promise<TurnUsageRollup[]> {
  const [sums, walls] = [
    await run<RollupRow>(db, "turnRollups", [sessionId, turnIndex]),
    await run<{ turn_index: number; wall_time_ms: number | null }>(db, "wallTimes", [
      sessionId,
      turnIndex,
    ]),
  ];
  const byTurn = new Map<number, TurnUsageRollup>();
  for (const row of sums.rows) {
    const elapsed_ms = sumOfMilliseconds(row.elapsed_ms);
    byTurn.set(row.turn_index, { ...row, elapsed_ms, turn_wall_time_ms: null });
  }
  for (const { turn_index, wall_time_ms } of walls.rows) {
    const turn = byTurn.get(turn_index) ?? { turn_index, ...emptyUsageRollup() };
    turn.turn_wall_time_ms = wall_time_ms;
    byTurn.set(turn_index, turn);
  }
  return [...byTurn.values()].sort((a, b) => a.turn_index - b.turn_index);
}

/** One turn's roll-up (what a turn's end reports); zeros until it records a call. */
export async function turnRollup(
  db: pg.Pool | pg.ClientBase,
  sessionId: string,
  turnIndex: number,
): Promise<TurnUsageRollup> {
  const [turn] = await turnRollups(db, sessionId, turnIndex);
  return turn ?? { turn_index: turnIndex, ...emptyUsageRollup() };
}
