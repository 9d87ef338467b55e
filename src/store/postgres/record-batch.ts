import type pg from "pg";
import type { z } from "zod";
import { SessionNotFoundError, TurnNotFoundError } from "../../domain/errors.js";
import type { PayloadRow } from "../call-payload-codec.js";
import { auditRowParams, batchTurns, usageRowParams } from "../sqlite/record-batch.js";
import { toMessageRowParams } from "../sqlite/rows.js";
import { USAGE_COLUMNS } from "../sqlite/statements.js";
import type { AppendRecordsOptions, AppendRecordsResult } from "../store-inputs.js";
import { insertPayload } from "./call-payloads.js";
import { AUDIT_COLUMNS, MESSAGE_COLUMNS, run, valuesOf } from "./queries.js";
import { turnRollup } from "./usage-rollups.js";

type ValidRecords = z.output<typeof AppendRecordsOptions>;

/**
 * `appendRecords` for PostgreSQL, inside the caller's transaction (one commit per round, a round
 * whole or not at all), as SQLite's RecordBatch: the session and the batch's turns are checked
 * once, before the rows; an unknown one refuses the batch, rolled back whole. Payload rows come
 * compressed, before the transaction opened.
 */
export async function appendBatch(
  client: pg.ClientBase,
  sessionId: string,
  input: ValidRecords,
  payloadRows: readonly PayloadRow[],
  createdAt: string,
): Promise<AppendRecordsResult> {
  const end = input.complete_turn;
  const written =
    input.message_groups.length + input.usage.length + input.audit.length + payloadRows.length;
  const touched = (written > 0 && input.touch_session) || end !== undefined;
  const turns = batchTurns(input);
  const [only] = turns;
  if (touched && turns.length === 1 && only !== undefined) {
    const touch = await run(client, "touchSessionOfTurn", [createdAt, sessionId, only]);
    if (touch.rowCount === 0) {
      if ((await run(client, "selectSessionId", [sessionId])).rowCount === 0) {
        throw new SessionNotFoundError(sessionId);
      }
      throw new TurnNotFoundError(sessionId, only);
    }
  } else {
    // Rows written without the touch hold the session's row, so a delete cannot pass them by.
    const check = written > 0 ? "lockSessionKey" : "selectSessionId";
    const known = touched
      ? (await run(client, "touchSession", [createdAt, sessionId])).rowCount === 1
      : (await run(client, check, [sessionId])).rowCount === 1;
    if (!known) throw new SessionNotFoundError(sessionId);
    for (const turnIndex of turns) {
      if ((await run(client, "selectTurn", [sessionId, turnIndex])).rowCount === 0) {
        throw new TurnNotFoundError(sessionId, turnIndex);
      }
    }
  }
  for (const group of input.message_groups) {
    for (const message of group.messages) {
      await run(
        client,
        "insertMessage",
        valuesOf(
          MESSAGE_COLUMNS,
          toMessageRowParams(sessionId, group.turn_index, message, createdAt),
        ),
      );
    }
  }
  // A row not inserted is a metric key recorded before.
  const usage_inserted: boolean[] = [];
  for (const entry of input.usage) {
    const params = valuesOf(USAGE_COLUMNS, usageRowParams(sessionId, entry, createdAt));
    usage_inserted.push((await run(client, "insertCheckedUsage", params)).rowCount === 1);
  }
  for (const entry of input.audit) {
    await run(
      client,
      "insertCheckedAudit",
      valuesOf(AUDIT_COLUMNS, auditRowParams(sessionId, entry, createdAt)),
    );
  }
  const payloads_inserted: boolean[] = [];
  for (const row of payloadRows) payloads_inserted.push(await insertPayload(client, row));
  if (end !== undefined) {
    await run(client, "completeTurn", [
      createdAt,
      end.wall_time_ms,
      end.status,
      sessionId,
      end.turn_index,
    ]);
  }
  const rollupTurn = input.rollup_turn;
  const turn_rollup =
    rollupTurn === undefined ? null : await turnRollup(client, sessionId, rollupTurn);
  return { usage_inserted, payloads_inserted, turn_rollup, updated_at: touched ? createdAt : null };
}
