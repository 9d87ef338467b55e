import type Database from "better-sqlite3";
import { InvalidInputError, SessionNotFoundError } from "../../domain/errors.js";
import { decodeCursor, encodeCursor, type Page, PageRequest } from "../../domain/pagination.js";
import type { AuditRecord, MessageRecord, TurnRecord } from "../../domain/records.js";
import type { ToolInvocationMode } from "../../domain/session-config.js";
import { type SessionPage, SessionQuery } from "../../domain/session-query.js";
import type { UsageCallRecord } from "../../domain/usage.js";
import { parseInput } from "../../domain/validation.js";
import {
  type AuditRow,
  type MessageRow,
  type TurnRow,
  toAuditRecord,
  toMessageRecord,
  toTurnRecord,
  toUsageCallRecord,
  type UsageRow,
} from "./rows.js";
import { SessionListQuery } from "./session-list-query.js";
import type { Statements } from "./statements.js";

/**
 * The store's keyset pages (see src/domain/pagination.ts). A per-session list's cursor names the
 * list and the session it came from, so a cursor of another list or session is refused rather
 * than silently starting somewhere else.
 */
export class SessionPages {
  private readonly sessions: SessionListQuery;

  constructor(
    readonly db: Database.Database,
    readonly sql: Statements,
  ) {
    this.sessions = new SessionListQuery(db);
  }

  listSessionPage(query: SessionQuery): SessionPage {
    return this.sessions.page(parseInput(SessionQuery, query, "listSessionPage"));
  }

  listUsageCalls(sessionId: string, page: PageRequest): Page<UsageCallRecord> {
    return this.keysetPage(sessionId, "calls", page, this.sql.pageUsage, (row: UsageRow, mode) => ({
      item: toUsageCallRecord(row, mode),
      key: row.id,
    }));
  }

  /** A session's call by its metric key (one unique-index lookup); null when it has none. */
  findUsageCall(sessionId: string, metricKey: string): UsageCallRecord | null {
    return this.db.transaction(() => {
      const mode = this.modeOf(sessionId);
      const row = this.sql.selectUsageByMetricKey.get(sessionId, metricKey) as UsageRow | undefined;
      return row === undefined ? null : toUsageCallRecord(row, mode);
    })();
  }

  listTurnPage(sessionId: string, page: PageRequest): Page<TurnRecord> {
    return this.keysetPage(sessionId, "turns", page, this.sql.pageTurns, (row: TurnRow) => ({
      item: toTurnRecord(row),
      key: row.turn_index,
    }));
  }

  listMessagePage(sessionId: string, page: PageRequest): Page<MessageRecord> {
    return this.keysetPage(
      sessionId,
      "messages",
      page,
      this.sql.pageMessages,
      (row: MessageRow) => ({
        item: toMessageRecord(row),
        key: row.id,
      }),
    );
  }

  listAuditPage(sessionId: string, page: PageRequest): Page<AuditRecord> {
    return this.keysetPage(sessionId, "audit", page, this.sql.pageAudit, (row: AuditRow) => ({
      item: toAuditRecord(row),
      key: row.id,
    }));
  }

  /** The session's mode (its calls carry it); an unknown session is SessionNotFoundError. */
  private modeOf(sessionId: string): ToolInvocationMode {
    const row = this.sql.selectSessionMode.get(sessionId) as
      | { mode: ToolInvocationMode }
      | undefined;
    if (row === undefined) throw new SessionNotFoundError(sessionId);
    return row.mode;
  }

  /**
   * One page of rows with an integer key (a turn index, a row id), oldest first: the rows after
   * the cursor's key, read with one more than the limit to know whether another page follows.
   */
  private keysetPage<Row, Item>(
    sessionId: string,
    list: string,
    request: PageRequest,
    statement: Database.Statement,
    map: (row: Row, mode: ToolInvocationMode) => { item: Item; key: number },
  ): Page<Item> {
    const { limit, cursor } = parseInput(PageRequest, request, list);
    const after = cursor === undefined ? 0 : cursorKey(cursor, list, sessionId);
    // One read transaction: the session's existence and its rows from the same snapshot.
    const rows = this.db.transaction(() => {
      const mode = this.modeOf(sessionId);
      return (statement.all(sessionId, after, limit + 1) as Row[]).map((row) => map(row, mode));
    })();
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    return {
      items: page.map((row) => row.item),
      next_cursor: more && last !== undefined ? encodeCursor([list, sessionId, last.key]) : null,
    };
  }
}

/** The key a per-session cursor carries, once it is known to be this list's and this session's. */
export function cursorKey(cursor: string, list: string, sessionId: string): number {
  const [name, session, key] = decodeCursor(cursor, ["string", "string", "number"]) as [
    string,
    string,
    number,
  ];
  if (name !== list || session !== sessionId || !Number.isSafeInteger(key)) {
    throw new InvalidInputError(
      `cursor: not a cursor of this session's ${list} (pass the next_cursor of the previous page unchanged)`,
    );
  }
  return key;
}
