/** Reading the lab's keyset-paged lists whole, as the browser tests compare the UI with them. */
import type { UsageCallRecord } from "../../src/domain/usage.js";
import type { Lab } from "./harness.js";

/** Every item of a paged list (`field` and `next_cursor`), following the cursor to the end. */
export async function readAllPages<T>(lab: Lab, path: string, field: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const url = new URL(path, lab.origin);
    url.searchParams.set("limit", "500");
    if (cursor !== null) url.searchParams.set("cursor", cursor);
    const body = await lab.api<Record<string, unknown>>(`${url.pathname}${url.search}`);
    const page = body[field];
    if (!Array.isArray(page)) throw new Error(`${path}: no "${field}" list in the answer`);
    items.push(...(page as T[]));
    cursor = typeof body.next_cursor === "string" ? body.next_cursor : null;
  } while (cursor !== null);
  return items;
}

/** A session's calls in recording order (`/usage/calls`, every page). */
export const sessionCalls = (lab: Lab, sessionId: string): Promise<UsageCallRecord[]> =>
  readAllPages(lab, `/api/sessions/${encodeURIComponent(sessionId)}/usage/calls`, "calls");
