import type Database from "better-sqlite3";
import { sessionPrices, tableCost } from "../../domain/call-pricing.js";
import { SessionExistsError } from "../../domain/errors.js";
import { toWellFormed } from "../../domain/json-limits.js";
import { redactSecrets } from "../../domain/secrets.js";
import { importedTurns, type ParsedSessionExport } from "../../domain/session-export.js";
import { tokenUsage } from "../../domain/usage.js";
import { toMessageRowParams, toUsageRowParams } from "./rows.js";
import { NEW_INCARNATION } from "./schema.js";
import type { Statements } from "./statements.js";

/**
 * The writes behind `deleteSession` and `importSession`. Each runs inside the caller's
 * transaction; neither touches a row of another session.
 */
export class SessionTransfer {
  private readonly deletes: Database.Statement<[string]>[];
  private readonly lowerWatermark: Database.Statement<[]>;
  private readonly insertSession: Database.Statement;
  private readonly insertTurn: Database.Statement;
  private readonly insertAudit: Database.Statement;

  /** Messages and calls are written with the store's own statements, as appends write them. */
  constructor(
    db: Database.Database,
    private readonly sql: Statements,
  ) {
    const tables = [
      "call_payloads",
      "turn_usage",
      "usage_stats",
      "audit_logs",
      "messages",
      "turns",
      "sessions",
    ];
    this.deletes = tables.map((table) =>
      db.prepare(`DELETE FROM ${table} WHERE ${table === "sessions" ? "id" : "session_id"} = ?`),
    );
    // token-fold.ts: folded_tokens sums the rows with id <= the watermark, and new rows are read
    // above it. Deleting the newest rows of a table without AUTOINCREMENT would let SQLite hand
    // their ids out again, below the watermark, where no listing would count them: so the
    // watermark never stays above the newest remaining row. (Nothing lies between them, so every
    // remaining folded_tokens is still right.)
    this.lowerWatermark = db.prepare(`
      UPDATE rollup_watermark SET usage_id = (SELECT COALESCE(MAX(id), 0) FROM usage_stats)
      WHERE usage_id > (SELECT COALESCE(MAX(id), 0) FROM usage_stats)`);
    this.insertSession = db.prepare(`
      INSERT INTO sessions (id, title, created_at, updated_at, config_json, turn_count, folded_tokens,
        incarnation)
      VALUES (@id, @title, @created_at, @updated_at, @config_json, @turn_count, 0, ${NEW_INCARNATION})`);
    this.insertTurn = db.prepare(`
      INSERT INTO turns (session_id, turn_index, user_message, started_at, completed_at, wall_time_ms, status, runner)
      VALUES (@session_id, @turn_index, @user_message, @started_at, @completed_at, @wall_time_ms, @status, @runner)`);
    this.insertAudit = db.prepare(`
      INSERT INTO audit_logs (session_id, turn_index, round_index, event, details_json, created_at)
      VALUES (@session_id, @turn_index, @round_index, @event, @details_json, @created_at)`);
  }

  /** Deletes every row of the session; the caller has checked that it exists. */
  delete(sessionId: string): void {
    for (const statement of this.deletes) statement.run(sessionId);
    this.lowerWatermark.run();
  }

  /**
   * Writes a validated document as session `sessionId`. Its usage rows get fresh ids above the
   * watermark, so `folded_tokens` starts at 0 and listings count them from the tail.
   */
  insert(document: ParsedSessionExport, sessionId: string): void {
    const { session } = document;
    // Validated by SessionExportDocument (no secrets); stored as the document has it.
    try {
      this.insertSession.run({
        id: sessionId,
        title: session.title,
        created_at: session.created_at,
        updated_at: session.updated_at,
        config_json: JSON.stringify(session.config),
        turn_count: document.turns.length,
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw new SessionExistsError(sessionId);
      }
      throw error;
    }
    for (const turn of importedTurns(document)) {
      this.insertTurn.run({ session_id: sessionId, ...turn });
    }
    for (const message of document.messages) {
      this.sql.insertMessage.run(
        toMessageRowParams(sessionId, message.turn_index, message, message.created_at),
      );
    }
    for (const entry of document.audit) {
      this.insertAudit.run({
        session_id: sessionId,
        turn_index: entry.turn_index,
        round_index: entry.round_index,
        event: entry.event,
        details_json: JSON.stringify(redactSecrets(toWellFormed(entry.details))),
        created_at: entry.created_at,
      });
    }
    for (const row of importedCallRows(document, sessionId)) this.sql.insertUsage.run(row);
  }
}

/**
 * The usage rows of an imported document (every backend's import writes these). A version-1
 * document predates recorded costs: its model calls get the table's estimate here, as an
 * upgraded database's rows do (cost-backfill.ts).
 */
export function importedCallRows(
  document: ParsedSessionExport,
  sessionId: string,
): Record<string, unknown>[] {
  const config = document.session.config;
  const prices = document.version === 1 ? sessionPrices(config) : null;
  return document.usage.calls.map(({ id: _id, mode: _mode, estimated: _derived, ...call }) => {
    const unpriced =
      prices !== null &&
      call.call_kind !== "tool_execution" &&
      call.cost_usd === null &&
      call.cost_estimated_usd === null;
    const cost_estimated_usd = unpriced
      ? tableCost(tokenUsage(call), config, call.agent, prices)
      : call.cost_estimated_usd;
    return toUsageRowParams(sessionId, { ...call, cost_estimated_usd });
  });
}
