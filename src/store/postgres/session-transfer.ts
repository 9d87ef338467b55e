import type pg from "pg";
import { sessionPrices, tableCost } from "../../domain/call-pricing.js";
import { SessionExistsError } from "../../domain/errors.js";
import { toWellFormed } from "../../domain/json-limits.js";
import { redactSecrets } from "../../domain/secrets.js";
import type { ParsedSessionExport } from "../../domain/session-export.js";
import { tokenUsage } from "../../domain/usage.js";
import { toMessageRowParams, toUsageRowParams } from "../sqlite/rows.js";
import { USAGE_COLUMNS } from "../sqlite/statements.js";
import { MESSAGE_COLUMNS, run, valuesOf } from "./queries.js";

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
    [
      sessionId,
      session.title,
      session.created_at,
      session.updated_at,
      JSON.stringify(session.config),
      document.turns.length,
    ],
  );
  if (inserted.rowCount === 0) throw new SessionExistsError(sessionId);
  for (const turn of document.turns) {
    await client.query(
      `INSERT INTO turns (session_id, turn_index, user_message, started_at, completed_at,
         wall_time_ms, status, runner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        sessionId,
        turn.turn_index,
        turn.user_message,
        turn.started_at,
        turn.completed_at,
        turn.wall_time_ms,
        turn.status,
        turn.runner,
      ],
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
  // A version-1 document predates recorded costs: its model calls get the table's estimate.
  const config = session.config;
  const prices = document.version === 1 ? sessionPrices(config) : null;
  for (const { id: _id, mode: _mode, estimated: _derived, ...call } of document.usage.calls) {
    const unpriced =
      prices !== null &&
      call.call_kind !== "tool_execution" &&
      call.cost_usd === null &&
      call.cost_estimated_usd === null;
    const cost_estimated_usd = unpriced
      ? tableCost(tokenUsage(call), config, call.agent, prices)
      : call.cost_estimated_usd;
    await run(
      client,
      "insertUsage",
      valuesOf(USAGE_COLUMNS, toUsageRowParams(sessionId, { ...call, cost_estimated_usd })),
    );
  }
}
