import type pg from "pg";
import type { CallPayloadRecord } from "../../domain/call-capture.js";
import { type PayloadRow, payloadRecord } from "../call-payload-codec.js";
import { storableText } from "./queries.js";

const COLUMNS = [
  "session_id",
  "metric_key",
  "turn_index",
  "round_index",
  "agent",
  "encoding",
  "request_compressed",
  "response_compressed",
  "request_bytes",
  "response_bytes",
  "request_truncated",
  "response_truncated",
  "created_at",
] as const;
const TYPES = [
  "text",
  "text",
  "int",
  "int",
  "text",
  "text",
  "bytea",
  "bytea",
  "int",
  "int",
  "int",
  "int",
  "text",
];

/** Guarded like a usage row: the turn must exist; a repeated key inserts nothing. */
const INSERT: pg.QueryConfig = {
  name: "insertPayload",
  text: `INSERT INTO call_payloads (${COLUMNS.join(", ")})
    SELECT ${COLUMNS.map((_, index) => `$${index + 1}::${TYPES[index]}`).join(", ")}
    WHERE EXISTS (SELECT 1 FROM turns WHERE session_id = $1 AND turn_index = $3)
    ON CONFLICT (session_id, metric_key) DO NOTHING`,
};

/** True when stored; false when the key already has a payload or the turn is unknown. */
export async function insertPayload(
  db: pg.Pool | pg.ClientBase,
  row: PayloadRow,
): Promise<boolean> {
  const result = await db.query({
    ...INSERT,
    values: storableText(COLUMNS.map((column) => row[column])),
  });
  return result.rowCount === 1;
}

export async function readPayload(
  db: pg.Pool,
  sessionId: string,
  metricKey: string,
): Promise<CallPayloadRecord | null> {
  const result = await db.query<PayloadRow>({
    name: "selectPayload",
    text: `SELECT ${COLUMNS.join(", ")} FROM call_payloads WHERE session_id = $1 AND metric_key = $2`,
    values: [sessionId, metricKey],
  });
  const row = result.rows[0];
  return row === undefined ? null : payloadRecord(row);
}
