import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import type Database from "better-sqlite3";
import type { z } from "zod";
import type { CallPayloadRecord } from "../../domain/call-capture.js";
import { StoredDataError } from "../../domain/errors.js";
import type { AgentRole } from "../../domain/usage.js";
import type { AppendCallPayloadOptions } from "../store-inputs.js";

/**
 * Brotli at quality 5, measured on chat-completion request bodies of 40, 78 and 156 KB (a tool
 * conversation of 25-100 turns): 22-25% smaller than gzip level 6 for about the same CPU
 * (0.4-0.9 ms against 0.3-0.7 ms to compress, ~0.1 ms either to decompress). Brotli's default
 * quality 11 is 15% smaller still but takes 60-220 ms per body, which a turn cannot spend.
 */
const ENCODING = "br5";
const QUALITY = 5;

function compress(text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  return brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
}

interface PayloadRow {
  session_id: string;
  metric_key: string;
  turn_index: number;
  round_index: number;
  agent: string;
  encoding: string;
  request_compressed: Buffer;
  response_compressed: Buffer;
  request_bytes: number;
  response_bytes: number;
  request_truncated: number;
  response_truncated: number;
  created_at: string;
}

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

  /**
   * The row to insert, bodies compressed: done before a write transaction opens, so the write
   * lock is not held while brotli runs.
   */
  row(sessionId: string, payload: ValidPayload, createdAt: string): PayloadRowParams {
    return {
      session_id: sessionId,
      metric_key: payload.metric_key,
      turn_index: payload.turn_index,
      round_index: payload.round_index,
      agent: payload.agent,
      encoding: ENCODING,
      request_compressed: compress(payload.request_body),
      response_compressed: compress(payload.response_body),
      request_bytes: payload.request_bytes,
      response_bytes: payload.response_bytes,
      request_truncated: payload.request_truncated ? 1 : 0,
      response_truncated: payload.response_truncated ? 1 : 0,
      created_at: createdAt,
    };
  }

  /** True when stored; false when the key already has a payload or the turn is unknown. */
  insertRow(row: PayloadRowParams): boolean {
    return this.insertStatement.run(row).changes === 1;
  }

  get(sessionId: string, metricKey: string): CallPayloadRecord | null {
    const row = this.selectRow.get(sessionId, metricKey);
    if (row === undefined) return null;
    const where = `call payload ${metricKey} of session ${sessionId}`;
    if (row.encoding !== ENCODING) {
      throw new StoredDataError(`${where}: unknown encoding ${row.encoding}`);
    }
    const decompress = (blob: Buffer, part: string) => {
      try {
        return brotliDecompressSync(blob).toString("utf8");
      } catch (error) {
        throw new StoredDataError(`${where}: the ${part} cannot be decompressed`, { cause: error });
      }
    };
    return {
      session_id: row.session_id,
      metric_key: row.metric_key,
      turn_index: row.turn_index,
      round_index: row.round_index,
      agent: row.agent as AgentRole,
      request_body: decompress(row.request_compressed, "request"),
      response_body: decompress(row.response_compressed, "response"),
      request_bytes: row.request_bytes,
      response_bytes: row.response_bytes,
      request_truncated: row.request_truncated !== 0,
      response_truncated: row.response_truncated !== 0,
      stored_bytes: row.request_compressed.length + row.response_compressed.length,
      created_at: row.created_at,
    };
  }
}
