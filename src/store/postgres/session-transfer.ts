import type pg from "pg";
import { SessionExistsError } from "../../domain/errors.js";
import { toWellFormed } from "../../domain/json-limits.js";
import { redactSecrets } from "../../domain/secrets.js";
import { importedTurns, type ParsedSessionExport } from "../../domain/session-export.js";
import { toMessageRowParams } from "../sqlite/rows.js";
import { importedCallRows } from "../sqlite/session-transfer.js";
import { USAGE_COLUMNS } from "../sqlite/statements.js";
import { MESSAGE_COLUMNS, run, storableText, valuesOf } from "./queries.js";

/** Every table with a session's rows; the session row goes first (its triggers see no turns). */
const TABLES = [
  "sessions",
  "call_payloads",
  "turn_usage",
  "usage_stats",
  "audit_logs",
  "messages",
  "turns",
];

/** Deletes every row of the session, inside the caller's transaction. */
export async function deleteSessionRows(client: pg.ClientBase, sessionId: string): Promise<void> {
  for (const table of TABLES) {
    await client.query(
      `DELETE FROM ${table} WHERE ${table === "sessions" ? "id" : "session_id"} = $1`,
      [sessionId],
    );
  }
}

/**
 * Writes a validated document as session `sessionId`, inside the caller's transaction, as
 * SQLite's SessionTransfer does (sqlite/session-transfer.ts): the same rows, the same repairs.
 */
export async function insertSessionRows(
  client: pg.ClientBase,
  document: ParsedSessionExport,
  sessionId: string,
): Promise<void> {
  const { session } = document;
  const inserted = await client.query(
    `INSERT INTO sessions (id, title, created_at, updated_at, config_json, turn_count)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
    storableText([
      sessionId,
      session.title,
      session.created_at,
      session.updated_at,
      JSON.stringify(session.config),
      document.turns.length,
    ]),
  );
  if (inserted.rowCount === 0) throw new SessionExistsError(sessionId);
  for (const turn of importedTurns(document)) {
    await client.query(
      `INSERT INTO turns (session_id, turn_index, user_message, started_at, completed_at,
         wall_time_ms, status, runner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      storableText([
        sessionId,
        turn.turn_index,
        turn.user_message,
        turn.started_at,
        turn.completed_at,
        turn.wall_time_ms,
        turn.status,
        turn.runner,
      ]),
    );
  }
  for (const message of document.messages) {
    await run(
      client,
      "insertMessage",
      valuesOf(
        MESSAGE_COLUMNS,
        toMessageRowParams(sessionId, message.turn_index, message, message.created_at),
      ),
    );
  }
  for (const entry of document.audit) {
    await run(client, "insertCheckedAudit", [
      sessionId,
      entry.turn_index,
      entry.round_index,
      entry.event,
      JSON.stringify(redactSecrets(toWellFormed(entry.details))),
      entry.created_at,
    ]);
  }
  for (const row of importedCallRows(document, sessionId)) {
    await run(client, "insertUsage", valuesOf(USAGE_COLUMNS, row));
  }
}
