import type { Page, PageRequest } from "../domain/pagination.js";
import type { SessionStore } from "../store/session-store.js";
import type { SessionRows } from "./turn-trace.js";

/** A first read of a session goes through it in large pages… */
const FIRST_PAGE = 500;
/** …later reads resume in small ones, so the page resumed from (re-read) stays small. */
const TAIL_PAGE = 25;
/** Sessions whose place is kept per store (a server's recent ones). */
const KEPT_SESSIONS = 256;

interface Place {
  turns?: string | undefined;
  calls?: string | undefined;
  audit?: string | undefined;
  messages?: string | undefined;
}

const places = new WeakMap<SessionStore, Map<string, Place>>();

/**
 * The rows of one ended turn, for the live export. The store's port reads a session's lists in
 * keyset pages from the start; this process keeps, per session, the cursor of the last page it
 * read of each list and resumes there, so a long-lived process (a server) reads only a page of
 * old rows and the new turn's, not the session again. A session seen for the first time (each
 * `agent-lab run` is a new process) is paged through once. Keyset cursors stay valid while rows
 * are appended, so resuming never skips one.
 */
export async function readTurnRows(
  store: SessionStore,
  sessionId: string,
  turnIndex: number,
  options: { content: boolean },
): Promise<SessionRows | null> {
  const session = await store.getSession(sessionId);
  if (session === null) return null;
  let known = places.get(store);
  if (known === undefined) {
    known = new Map();
    places.set(store, known);
  }
  const place = known.get(sessionId) ?? {};
  known.delete(sessionId);
  const ofTurn = <Row extends { turn_index: number | null }>(rows: Row[]) =>
    rows.filter((row) => row.turn_index === turnIndex);
  const turns = await tail((page) => store.listTurnPage(sessionId, page), place.turns);
  const calls = await tail((page) => store.listUsageCalls(sessionId, page), place.calls);
  const audit = await tail((page) => store.listAuditPage(sessionId, page), place.audit);
  const messages = options.content
    ? await tail((page) => store.listMessagePage(sessionId, page), place.messages)
    : { rows: [], resume: place.messages };
  known.set(sessionId, {
    turns: turns.resume,
    calls: calls.resume,
    audit: audit.resume,
    messages: messages.resume,
  });
  if (known.size > KEPT_SESSIONS) known.delete(known.keys().next().value as string);
  return {
    session_id: sessionId,
    config: session.config,
    turns: ofTurn(turns.rows),
    calls: ofTurn(calls.rows),
    audit: ofTurn(audit.rows),
    messages: ofTurn(messages.rows),
  };
}

type Reader<Row> = (page: PageRequest) => Page<Row> | Promise<Page<Row>>;

/** The rows after `from`, and the cursor to resume at next time (the last page's own). */
async function tail<Row>(
  read: Reader<Row>,
  from: string | undefined,
): Promise<{ rows: Row[]; resume: string | undefined }> {
  if (from === undefined) return pages(read, undefined);
  try {
    return await pages(read, from);
  } catch {
    // A cursor the store no longer takes (the session was deleted and made again): read it all.
    return pages(read, undefined);
  }
}

async function pages<Row>(
  read: Reader<Row>,
  from: string | undefined,
): Promise<{ rows: Row[]; resume: string | undefined }> {
  const rows: Row[] = [];
  let cursor = from;
  for (;;) {
    const limit = from === undefined ? FIRST_PAGE : TAIL_PAGE;
    const page = await read({ limit, ...(cursor === undefined ? {} : { cursor }) });
    rows.push(...page.items);
    if (page.next_cursor === null) return { rows, resume: cursor };
    cursor = page.next_cursor;
  }
}
