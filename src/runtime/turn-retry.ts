import { AgentLabError, TurnNotFoundError } from "../domain/errors.js";
import type { TurnRecord, TurnRecordStatus } from "../domain/records.js";
import { RETRYABLE_STATUSES } from "../domain/turn-retry-rule.js";
import type { SessionStore } from "../store/session-store.js";
import { requireSource } from "./session-fork.js";

/** A retry of a turn that completed (or is still running). */
export class TurnNotRetryableError extends AgentLabError {
  readonly code = "turn_not_retryable" as const;
  constructor(
    readonly sessionId: string,
    readonly turnIndex: number,
    readonly status: TurnRecordStatus,
  ) {
    super(
      `turn ${turnIndex} of session ${sessionId} is ${status}: only a ${RETRYABLE_STATUSES.join(", ")} turn can be retried`,
    );
  }
}

/**
 * The turn a retry runs again: `turnIndex`, or the session's last turn when absent. Unknown
 * session → SessionNotFoundError, unknown turn → TurnNotFoundError, a completed or running one →
 * TurnNotRetryableError. The retry itself is an ordinary new turn with the same user message;
 * the old turn stays as it was.
 */
export async function retryableTurn(
  store: SessionStore,
  sessionId: string,
  turnIndex?: number,
): Promise<TurnRecord> {
  await requireSource(store, sessionId);
  const turns = await store.listTurns(sessionId);
  const turn =
    turnIndex === undefined ? turns.at(-1) : turns.find((row) => row.turn_index === turnIndex);
  if (turn === undefined) throw new TurnNotFoundError(sessionId, turnIndex ?? 1);
  if (!RETRYABLE_STATUSES.includes(turn.status)) {
    throw new TurnNotRetryableError(sessionId, turn.turn_index, turn.status);
  }
  return turn;
}
