import type pg from "pg";
import type { z } from "zod";
import {
  SessionChangedError,
  SessionNotFoundError,
  TurnInProgressError,
} from "../../domain/errors.js";
import type { ClaimedTurn } from "../session-store.js";
import { auditRowParams } from "../sqlite/record-batch.js";
import { toMessageRowParams } from "../sqlite/rows.js";
import type { ClaimTurnOptions } from "../store-inputs.js";
import { AUDIT_COLUMNS, MESSAGE_COLUMNS, run, valuesOf } from "./queries.js";

type ClaimInput = z.output<typeof ClaimTurnOptions>;

/** The audit row of a dead runner's turn: the same words SQLite writes (sqlite/turn-claim.ts). */
const INTERRUPTED_REASON = "its process ended before the turn did";

interface RunningTurn {
  turn_index: number;
  runner: string | null;
  /** Whether its lease has run out; null for a turn without one. */
  expired: boolean | null;
  /** How long its lease has left; null for a turn without one. */
  lease_left_ms: number | null;
}

/**
 * Whether a running turn still runs. The lease decides for a turn another store holds, on this
 * host or another: `is_runner_alive` cannot see another host's processes (the runtime answers
 * "dead" for them, so that SQLite's record alone never locks a session), and across hosts a dead
 * runner is told by its lease running out, not by its pid. The runner's liveness decides for a
 * turn this store holds itself (the runtime knows its own turns: one whose end could not be
 * stored is not running any more) and for a turn without a lease (imported, copied from SQLite).
 */
function isRunning(
  turn: RunningTurn,
  heldHere: boolean,
  isAlive: (runner: string | null) => boolean,
): boolean {
  if (heldHere || turn.expired === null) return isAlive(turn.runner);
  return !turn.expired;
}

/**
 * `claimTurn` for PostgreSQL, inside the caller's transaction. Its first statement updates the
 * session row (count and updated_at), which takes that row's lock: a second claimer of the same
 * session, on any host, waits there until the first commits, then sees its turn. A running turn
 * that is still running (isRunning) refuses the claim; otherwise it is marked interrupted,
 * audited, and the next index is taken.
 */
export async function claimTurn(
  client: pg.ClientBase,
  sessionId: string,
  input: ClaimInput,
  timestamp: string,
  leaseMs: number,
  /** Whether this store holds (renews) the turn's lease: see isRunning. */
  holds: (sessionId: string, turnIndex: number) => boolean,
): Promise<ClaimedTurn> {
  const isAlive = input.is_runner_alive ?? (() => true);
  const { expected } = input;
  const counted =
    expected === undefined
      ? await run(client, "countTurn", [timestamp, sessionId])
      : await run(client, "countTurnIfUnchanged", [
          timestamp,
          sessionId,
          expected.updated_at,
          expected.incarnation,
        ]);
  if (counted.rowCount === 0) {
    if (
      expected === undefined ||
      (await run(client, "selectSessionId", [sessionId])).rowCount === 0
    ) {
      throw new SessionNotFoundError(sessionId);
    }
    throw new SessionChangedError(sessionId);
  }
  const running = (await run<RunningTurn>(client, "runningTurns", [sessionId])).rows;
  for (const turn of running) {
    const heldHere = holds(sessionId, turn.turn_index);
    if (isRunning(turn, heldHere, isAlive)) {
      // Another store's runner may have died: its lease, not its pid, says when the turn is free.
      const leaseLeft = heldHere || turn.expired === null ? null : turn.lease_left_ms;
      throw new TurnInProgressError(sessionId, turn.turn_index, turn.runner, leaseLeft);
    }
  }
  const interrupted: number[] = [];
  for (const turn of running) {
    await run(client, "completeTurn", [timestamp, null, "interrupted", sessionId, turn.turn_index]);
    await run(client, "insertCheckedAudit", [
      sessionId,
      turn.turn_index,
      null,
      "turn_interrupted",
      JSON.stringify({ runner: turn.runner, reason: INTERRUPTED_REASON }),
      timestamp,
    ]);
    interrupted.push(turn.turn_index);
  }
  const last = (await run<{ last: number }>(client, "lastTurnIndex", [sessionId])).rows[0];
  const turn_index = (last?.last ?? 0) + 1;
  await run(client, "insertTurn", [
    sessionId,
    turn_index,
    input.user_message,
    timestamp,
    input.runner,
    leaseMs,
  ]);
  await run(
    client,
    "insertMessage",
    valuesOf(
      MESSAGE_COLUMNS,
      toMessageRowParams(
        sessionId,
        turn_index,
        { role: "user", content: input.user_message, tool_calls: [] },
        timestamp,
      ),
    ),
  );
  if (input.audit !== undefined) {
    await run(
      client,
      "insertCheckedAudit",
      valuesOf(
        AUDIT_COLUMNS,
        auditRowParams(sessionId, { ...input.audit, turn_index, round_index: null }, timestamp),
      ),
    );
  }
  return { turn_index, interrupted };
}
