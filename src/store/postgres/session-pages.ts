import type pg from "pg";
import { SessionNotFoundError } from "../../domain/errors.js";
import { encodeCursor, type Page, PageRequest } from "../../domain/pagination.js";
import type { AuditRecord, MessageRecord, TurnRecord } from "../../domain/records.js";
import type { ToolInvocationMode } from "../../domain/session-config.js";
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
} from "../sqlite/rows.js";
import { cursorKey } from "../sqlite/session-pages.js";
import { run, type StatementName } from "./queries.js";
import { inTransaction, READ_SNAPSHOT } from "./transaction.js";

/** The session's mode (its calls carry it); an unknown session is SessionNotFoundError. */
async function modeOf(client: pg.ClientBase, sessionId: string): Promise<ToolInvocationMode> {
  const row = (await run<{ mode: ToolInvocationMode }>(client, "selectSessionMode", [sessionId]))
    .rows[0];
  if (row === undefined) throw new SessionNotFoundError(sessionId);
  return row.mode;
}

/**
 * The per-session keyset pages (see src/domain/pagination.ts), as SQLite's session-pages.ts:
 * a cursor names its list and session, so one of another list or session is refused.
 */
export class SessionPages {
  constructor(private readonly pool: pg.Pool) {}

  listUsageCalls(sessionId: string, page: PageRequest): Promise<Page<UsageCallRecord>> {
    return this.keysetPage(sessionId, "calls", page, "pageUsage", (row: UsageRow, mode) => ({
      item: toUsageCallRecord(row, mode),
      key: row.id,
    }));
  }

  findUsageCall(sessionId: string, metricKey: string): Promise<UsageCallRecord | null> {
    return inTransaction(
      this.pool,
      async (client) => {
        const mode = await modeOf(client, sessionId);
        const row = (await run<UsageRow>(client, "selectUsageByMetricKey", [sessionId, metricKey]))
          .rows[0];
        return row === undefined ? null : toUsageCallRecord(row, mode);
      },
      READ_SNAPSHOT,
    );
  }

  listTurnPage(sessionId: string, page: PageRequest): Promise<Page<TurnRecord>> {
    return this.keysetPage(sessionId, "turns", page, "pageTurns", (row: TurnRow) => ({
      item: toTurnRecord(row),
      key: row.turn_index,
    }));
  }

  listMessagePage(sessionId: string, page: PageRequest): Promise<Page<MessageRecord>> {
    return this.keysetPage(sessionId, "messages", page, "pageMessages", (row: MessageRow) => ({
      item: toMessageRecord(row),
      key: row.id,
    }));
  }

  listAuditPage(sessionId: string, page: PageRequest): Promise<Page<AuditRecord>> {
    return this.keysetPage(sessionId, "audit", page, "pageAudit", (row: AuditRow) => ({
      item: toAuditRecord(row),
      key: row.id,
    }));
  }

  private async keysetPage<Row extends pg.QueryResultRow, Item>(
    sessionId: string,
    list: string,
    request: PageRequest,
    statement: StatementName,
    map: (row: Row, mode: ToolInvocationMode) => { item: Item; key: number },
  ): Promise<Page<Item>> {
    const { limit, cursor } = parseInput(PageRequest, request, list);
    const after = cursor === undefined ? 0 : cursorKey(cursor, list, sessionId);
    // One snapshot: the session's existence and its rows agree.
    const rows = await inTransaction(
      this.pool,
      async (client) => {
        const mode = await modeOf(client, sessionId);
        const result = await run<Row>(client, statement, [sessionId, after, limit + 1]);
        return result.rows.map((row) => map(row, mode));
      },
      READ_SNAPSHOT,
    );
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    return {
      items: page.map((row) => row.item),
      next_cursor: more && last !== undefined ? encodeCursor([list, sessionId, last.key]) : null,
    };
  }
}
