import { z } from "zod";
import { InvalidInputError } from "./errors.js";

/**
 * Keyset pagination, the one scheme every list uses: a page is `limit` rows after a cursor, and
 * the cursor is the sort key of the last row handed out. Unlike OFFSET, a page costs the same at
 * row 10 and at row 1,000,000, and no row is handed out twice. A list ordered by a key that rows
 * keep (a session's turns, messages, calls) misses none added meanwhile; the session list is
 * ordered by `updated_at`, so a session written to during a walk moves ahead of the cursor and
 * this walk does not meet it again (a new walk, or the web UI's Refresh, shows it first).
 */

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

export const PageLimit = z.coerce
  .number()
  .int("limit must be a whole number")
  .min(1, "limit must be at least 1")
  .max(MAX_PAGE_LIMIT, `limit is at most ${MAX_PAGE_LIMIT}`);

export const PageRequest = z.strictObject({
  limit: PageLimit.default(DEFAULT_PAGE_LIMIT),
  /** Opaque: the `next_cursor` of the previous page. Absent for the first page. */
  cursor: z.string().max(1024, "cursor is at most 1024 characters").optional(),
});
export type PageRequest = z.input<typeof PageRequest>;

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export type CursorValue = string | number;

/** The sort key of a page's last row, as an opaque URL-safe string. */
export function encodeCursor(values: readonly CursorValue[]): string {
  return toBase64Url(JSON.stringify(values));
}

// btoa/atob rather than Buffer, so the domain stays importable by the web UI.
function toBase64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return new TextDecoder("utf-8", { fatal: true }).decode(
    Uint8Array.from(binary, (char) => char.charCodeAt(0)),
  );
}

/**
 * The sort key back from a cursor made by `encodeCursor` with `kinds` (the type of each value);
 * anything else (edited, truncated, from another list) is refused by name.
 */
export function decodeCursor(
  cursor: string,
  kinds: readonly ("string" | "number")[],
  label = "cursor",
): CursorValue[] {
  let values: unknown;
  try {
    values = JSON.parse(fromBase64Url(cursor));
  } catch {
    values = null;
  }
  if (
    !Array.isArray(values) ||
    values.length !== kinds.length ||
    values.some((value, index) => typeof value !== kinds[index])
  ) {
    throw new InvalidInputError(
      `${label}: not a cursor of this list (pass the next_cursor of the previous page unchanged)`,
    );
  }
  return values as CursorValue[];
}
