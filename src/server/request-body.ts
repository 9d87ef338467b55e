import type { Context } from "hono";
import type { z } from "zod";
import { InvalidInputError } from "../domain/errors.js";
import { describeTooDeep, findTooDeep, MAX_DOCUMENT_DEPTH } from "../domain/json-limits.js";
import { parseInput } from "../domain/validation.js";
import { PayloadTooLargeError } from "./http-errors.js";

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads a JSON body of at most `limitBytes` and validates it with `schema`. The declared
 * Content-Length is checked first, then the bytes actually received (a chunked body, or one that
 * lies about its length), so an oversized body is never buffered whole.
 */
export async function readJsonBody<Schema extends z.ZodType>(
  c: Context,
  schema: Schema,
  limitBytes: number,
): Promise<z.output<Schema>> {
  const declared = c.req.header("content-length");
  if (declared !== undefined && Number(declared) > limitBytes) {
    throw new PayloadTooLargeError(limitBytes);
  }
  // A declared length bounds the body (node's parser reads no further), so the adapter's fast
  // path may buffer it; a chunked body is read piece by piece against the limit.
  const text =
    declared !== undefined && Number.isSafeInteger(Number(declared))
      ? decodeUtf8(new Uint8Array(await c.req.raw.arrayBuffer()))
      : await readText(c.req.raw.body, limitBytes);
  if (text.trim() === "")
    throw new InvalidInputError("request body: expected a JSON document, got none");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`request body: not valid JSON (${(error as Error).message})`);
  }
  // Before zod and every walker that recurses: a deeply nested body must not overflow the stack.
  const tooDeep = findTooDeep(value, MAX_DOCUMENT_DEPTH);
  if (tooDeep !== null) {
    throw new InvalidInputError(`request body: ${describeTooDeep(tooDeep, MAX_DOCUMENT_DEPTH)}`);
  }
  return parseInput(schema, value, "request body");
}

async function readText(body: ReadableStream<Uint8Array> | null, limitBytes: number) {
  if (body === null) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(limitBytes);
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks));
}

/** One for all requests: making a fatal decoder costs about a millisecond in Node 20. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new InvalidInputError("request body: not valid UTF-8");
  }
}
