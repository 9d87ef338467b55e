import type Database from "better-sqlite3";
import type { z } from "zod";
import type { CallPayloadRecord } from "../../domain/call-capture.js";
import { type PayloadRow, payloadRecord, payloadRow } from "../call-payload-codec.js";
import type { AppendCallPayloadOptions } from "../store-inputs.js";

type ValidPayload = z.output<typeof AppendCallPayloadOptions>;

/** A payload row as bound to the insert (see `CallPayloads.row`). */
export type PayloadRowParams = PayloadRow;

/** The call_payloads table: one compressed request and response per metric key of a session. */
export class CallPayloads {
  private readonly insertStatement: Database.Statement;
  private readonly selectRow: Database.Statement<[string, string], PayloadRow>;

  constructor(db: Database.Database) {
    // Guarded like a usage row: the turn must exist; a repeated key inserts nothing.
    this.insertStatement = db.prepare(`
      INSERT INTO call_payloads (session_id, metric_key, turn_index, round_index, agent, encoding,
        request_compressed, response_compressed, request_bytes, response_bytes,
        request_truncated, response_truncated, created_at)
      SELECT @session_id, @metric_key, @turn_index, @round_index, @agent, @encoding,
        @request_compressed, @response_compressed, @request_bytes, @response_bytes,
        @request_truncated, @response_truncated, @created_at
      WHERE EXISTS (SELECT 1 FROM turns WHERE session_id = @session_id AND turn_index = @turn_index)
      ON CONFLICT (session_id, metric_key) DO NOTHING`);
    this.selectRow = db.prepare(
      "SELECT * FROM call_payloads WHERE session_id = ? AND metric_key = ?",
    );
  }

  /** True when stored; false when nothing was (the key has a payload, or the turn is unknown). */
  insert(sessionId: string, payload: ValidPayload, createdAt: string): boolean {
    return this.insertRow(this.row(sessionId, payload, createdAt));
  }

  /** The row to insert, bodies compressed (before the write lock is taken). */
  row(sessionId: string, payload: ValidPayload, createdAt: string): PayloadRowParams {
    return payloadRow(sessionId, payload, createdAt);
  }

  /** True when stored; false when the key already has a payload or the turn is unknown. */
  insertRow(row: PayloadRowParams): boolean {
    return this.insertStatement.run(row).changes === 1;
  }

  get(sessionId: string, metricKey: string): CallPayloadRecord | null {
    const row = this.selectRow.get(sessionId, metricKey);
    return row === undefined ? null : payloadRecord(row);
  }
}
