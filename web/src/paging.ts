/**
 * Keyset pages as the UI reads them: every list of the API answers a page of items and the
 * `next_cursor` to pass back for the next one (null on the last page).
 */

export interface Loaded<T> {
  items: T[];
  /** Where the next page starts; null once everything has been read. */
  next_cursor: string | null;
}

/**
 * Reads pages from `cursor` on until the list ends or `maxItems` are in hand, so a normal
 * session's record arrives whole while a huge one stops at a bound (its `next_cursor` says where
 * to go on). A server that hands back the cursor it was given would loop: that is an error.
 */
export async function fetchPages<T>(
  fetchPage: (cursor: string | null) => Promise<Loaded<T>>,
  maxItems: number,
  cursor: string | null = null,
): Promise<Loaded<T>> {
  const items: T[] = [];
  let next = cursor;
  do {
    const page = await fetchPage(next);
    for (const item of page.items) items.push(item);
    if (page.next_cursor !== null && page.next_cursor === next) {
      throw new Error("the server sent the same page cursor twice; the list cannot be read");
    }
    next = page.next_cursor;
  } while (next !== null && items.length < maxItems);
  return { items, next_cursor: next };
}

/** One API answer as a page: its list under `field`, and its cursor (none: the last page). */
export function pageOf<T, F extends string>(
  body: { [key in F]: T[] } & { next_cursor?: string | null },
  field: F,
): Loaded<T> {
  return { items: body[field], next_cursor: body.next_cursor ?? null };
}
