import type Database from "better-sqlite3";
import type { Page, PageRequest } from "../../domain/pagination.js";
import type { AuditRecord, MessageRecord, TurnRecord } from "../../domain/records.js";
import type { SessionPage, SessionQuery } from "../../domain/session-query.js";
import type { UsageCallRecord } from "../../domain/usage.js";
import type { Statements } from "./statements.js";

/** The store's keyset pages (see src/domain/pagination.ts). */
export class SessionPages {
  constructor(
    readonly db: Database.Database,
    readonly sql: Statements,
  ) {}

  listSessionPage(_query: SessionQuery): SessionPage {
    throw new Error("listSessionPage: not built yet");
  }

  listUsageCalls(_sessionId: string, _page: PageRequest): Page<UsageCallRecord> {
    throw new Error("listUsageCalls: not built yet");
  }

  listTurnPage(_sessionId: string, _page: PageRequest): Page<TurnRecord> {
    throw new Error("listTurnPage: not built yet");
  }

  listMessagePage(_sessionId: string, _page: PageRequest): Page<MessageRecord> {
    throw new Error("listMessagePage: not built yet");
  }

  listAuditPage(_sessionId: string, _page: PageRequest): Page<AuditRecord> {
    throw new Error("listAuditPage: not built yet");
  }
}
