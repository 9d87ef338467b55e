import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import type { z } from "zod";
import type { CallPayloadRecord } from "../domain/call-capture.js";
import { StoredDataError } from "../domain/errors.js";
import type { AgentRole } from "../domain/usage.js";
import type { AppendCallPayloadOptions } from "./store-inputs.js";

/**
 * How every backend keeps a call's captured request and response: compressed, with the codec
 * named beside them (`encoding`), so a later one can be read beside it.
 *
 * Brotli at quality 5, measured on chat-completion request bodies of 40, 78 and 156 KB (a tool
 * conversation of 25-100 turns): 22-25% smaller than gzip level 6 for about the same CPU
 * (0.4-0.9 ms against 0.3-0.7 ms to compress, ~0.1 ms either to decompress). Brotli's default
 * quality 11 is 15% smaller still but takes 60-220 ms per body, which a turn cannot spend.
 */
const ENCODING = "br5";
const QUALITY = 5;

/** `utf8`, when given, is the text's own encoding (see `AppendCallPayloadOptions.response_utf8`). */
function compress(text: string, utf8?: Uint8Array): Buffer {
  const bytes = utf8 ?? Buffer.from(text, "utf8");
  return brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
}

/** A call_payloads row, as both backends store it. */
export interface PayloadRow {
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

/**
 * The row to insert, bodies compressed: done before a write transaction opens, so no lock is
 * held while brotli runs.
 */
export function payloadRow(
  sessionId: string,
  payload: ValidPayload,
  createdAt: string,
): PayloadRow {
  return {
    session_id: sessionId,
    metric_key: payload.metric_key,
    turn_index: payload.turn_index,
    round_index: payload.round_index,
    agent: payload.agent,
    encoding: ENCODING,
    request_compressed: compress(payload.request_body),
    response_compressed: compress(payload.response_body, payload.response_utf8),
    request_bytes: payload.request_bytes,
    response_bytes: payload.response_bytes,
    request_truncated: payload.request_truncated ? 1 : 0,
    response_truncated: payload.response_truncated ? 1 : 0,
    created_at: createdAt,
  };
}

/** A stored row read back as the record, or StoredDataError naming what does not decode. */
export function payloadRecord(row: PayloadRow): CallPayloadRecord {
  const where = `call payload ${row.metric_key} of session ${row.session_id}`;
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
