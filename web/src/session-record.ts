/**
 * What the session page reads: the session, its turns and roll-ups, and its messages, calls and
 * audit rows, each list read page after page (`next_cursor`) so a normal session's transcript
 * arrives whole, up to a bound so a huge one cannot stall the page; what is past the bound is
 * read on demand.
 */
import { api } from "./api.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionDetailResponse,
  UsageCallRecord,
  UsageSummary,
} from "./api-types.js";
import { fetchPages, type Loaded, pageOf } from "./paging.js";

/** The API's largest page: fewest round trips for a whole transcript. */
export const RECORD_PAGE_LIMIT = 500;
/** Messages and audit rows read before the page asks: ~1,000 turns of a tool-using conversation. */
export const RECORD_BOUND = 5_000;
/**
 * Calls read before the page asks. Fewer: the transcript takes its tool facts from the audit too,
 * and the calls only add each turn's TTFT and waterfall (the usage tab pages them itself).
 */
export const CALLS_BOUND = 2_000;

export interface SessionRecordData {
  detail: SessionDetailResponse;
  messages: MessageRecord[];
  /** The roll-ups, with the calls read so far (the transcript and charts read them). */
  usage: UsageSummary;
  audit: AuditRecord[];
  /** True when some list was longer than the bound: the record shown is its beginning. */
  partial: boolean;
  /** True when the calls were: the later turns' calls (their TTFT, their waterfall) are not read. */
  calls_partial: boolean;
}

type PageReader<T> = (cursor: string | null, signal: AbortSignal) => Promise<Loaded<T>>;

export const readMessages =
  (id: string): PageReader<MessageRecord> =>
  (cursor, signal) =>
    api
      .messages(id, { limit: RECORD_PAGE_LIMIT, cursor }, signal)
      .then((body) => pageOf(body, "messages"));

export const readCalls =
  (id: string, limit = RECORD_PAGE_LIMIT): PageReader<UsageCallRecord> =>
  (cursor, signal) =>
    api.usageCalls(id, { limit, cursor }, signal).then((body) => pageOf(body, "calls"));

export const readAudit =
  (id: string): PageReader<AuditRecord> =>
  (cursor, signal) =>
    api
      .audit(id, { limit: RECORD_PAGE_LIMIT, cursor }, signal)
      .then((body) => pageOf(body, "audit"));

/** Every page of a list up to `bound` items. */
export const readAll = <T>(read: PageReader<T>, bound: number, signal: AbortSignal) =>
  fetchPages((cursor) => read(cursor, signal), bound);

/** Reads the record; `reads` (1, 2, …) multiplies the bounds, each "Read more" adding one. */
export async function loadSessionRecord(
  id: string,
  reads: number,
  signal: AbortSignal,
): Promise<SessionRecordData> {
  const [detail, rollups, messages, calls, audit] = await Promise.all([
    api.getSession(id, signal),
    api.usage(id, signal),
    readAll(readMessages(id), reads * RECORD_BOUND, signal),
    readAll(readCalls(id), reads * CALLS_BOUND, signal),
    readAll(readAudit(id), reads * RECORD_BOUND, signal),
  ]);
  return {
    detail,
    messages: messages.items,
    usage: { ...rollups, calls: calls.items },
    audit: audit.items,
    partial: [messages, calls, audit].some((list) => list.next_cursor !== null),
    calls_partial: calls.next_cursor !== null,
  };
}
