import type Database from "better-sqlite3";
import type { z } from "zod";
import {
  SessionChangedError,
  SessionNotFoundError,
  TurnInProgressError,
} from "../../domain/errors.js";
import type { ClaimedTurn } from "../session-store.js";
import type { ClaimTurnOptions } from "../store-inputs.js";
import { auditRowParams } from "./record-batch.js";
import { toMessageRowParams } from "./rows.js";
import { RUNNING_TURN } from "./schema.js";
import type { Statements } from "./statements.js";

type ClaimInput = z.output<typeof ClaimTurnOptions>;

/**
 * `claimTurn` for SQLite. The check for a running turn, the choice of the next index and the
 * inserts (the turn, its user message, its first audit row) are one BEGIN IMMEDIATE transaction:
 * SQLite lets one connection at a time hold the write lock, so two processes claiming together
 * are serialized and the second sees the first's turn. A refusal rolls the whole claim back.
 */
export class TurnClaim {
  readonly #sql: Statements;
  /** Made once: better-sqlite3 builds five wrappers for every transaction function it is given. */
  readonly #transaction;
  readonly #running: Database.Statement;
  readonly #lastIndex: Database.Statement;

  constructor(db: Database.Database, sql: Statements) {
    this.#sql = sql;
    this.#transaction = db.transaction(
      (sessionId: string, input: ClaimInput, now: () => string): ClaimedTurn =>
        this.#claim(sessionId, input, now),
    );
    // Answered from the turns_running partial index: the session's finished turns are not read.
    this.#running = db.prepare(`
      SELECT turn_index, runner FROM turns
      WHERE session_id = ? AND ${RUNNING_TURN}
      ORDER BY turn_index`);
    this.#lastIndex = db
      .prepare("SELECT COALESCE(MAX(turn_index), 0) FROM turns WHERE session_id = ?")
      .pluck();
  }

  claim(sessionId: string, input: ClaimInput, now: () => string): ClaimedTurn {
    return this.#transaction.immediate(sessionId, input, now);
  }

  #claim(sessionId: string, input: ClaimInput, now: () => string): ClaimedTurn {
    const isAlive = input.is_runner_alive ?? (() => true);
    const timestamp = now();
    // The session's count and updated_at move first: no row changed means no session (or, for a
    // claim that expected the session as it was, a session changed since), and a refusal below
    // rolls this back with the rest.
    const { expected } = input;
    const counted =
      expected === undefined
        ? this.#sql.countTurn.run(timestamp, sessionId)
        : this.#sql.countTurnIfUnchanged.run(
            timestamp,
            sessionId,
            expected.updated_at,
            expected.incarnation,
          );
    if (counted.changes === 0) {
      if (expected === undefined || this.#sql.selectSessionId.get(sessionId) === undefined) {
        throw new SessionNotFoundError(sessionId);
      }
      throw new SessionChangedError(sessionId);
    }
    const interrupted: number[] = [];
    const running = this.#running.all(sessionId) as {
      turn_index: number;
      runner: string | null;
    }[];
    for (const turn of running) {
      if (isAlive(turn.runner)) {
        throw new TurnInProgressError(sessionId, turn.turn_index, turn.runner);
      }
    }
    for (const turn of running) {
      this.#sql.completeTurn.run(timestamp, null, "interrupted", sessionId, turn.turn_index);
      this.#sql.insertCheckedAudit.run({
        session_id: sessionId,
        turn_index: turn.turn_index,
        round_index: null,
        event: "turn_interrupted",
        details_json: JSON.stringify({
          runner: turn.runner,
          reason: "its process ended before the turn did",
        }),
        created_at: timestamp,
      });
      interrupted.push(turn.turn_index);
    }
    const turn_index = (this.#lastIndex.get(sessionId) as number) + 1;
    this.#sql.insertTurn.run(sessionId, turn_index, input.user_message, timestamp, input.runner);
    this.#sql.insertMessage.run(
      toMessageRowParams(
        sessionId,
        turn_index,
        { role: "user", content: input.user_message, tool_calls: [] },
        timestamp,
      ),
    );
    if (input.audit !== undefined) {
      this.#sql.insertCheckedAudit.run(
        auditRowParams(sessionId, { ...input.audit, turn_index, round_index: null }, timestamp),
      );
    }
    return { turn_index, interrupted };
  }
}
