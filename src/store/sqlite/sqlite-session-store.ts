import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { CallPayloadRecord } from "../../domain/call-capture.js";
import {
  SessionExistsError,
  SessionModeMismatchError,
  SessionNotFoundError,
  TurnExistsError,
  TurnNotFoundError,
} from "../../domain/errors.js";
import type { ExperimentListItem } from "../../domain/experiment.js";
import type { ChatMessage } from "../../domain/messages.js";
import type { Page, PageRequest } from "../../domain/pagination.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionListItem,
  SessionOverview,
  SessionRecord,
  TurnRecord,
} from "../../domain/records.js";
import { modeOf } from "../../domain/session-config.js";
import {
  ImportSessionOptions,
  SESSION_EXPORT_FORMAT,
  SESSION_EXPORT_VERSION,
  type SessionExport,
  SessionExportDocument,
} from "../../domain/session-export.js";
import type { SessionPage, SessionQuery } from "../../domain/session-query.js";
import type { UsageCallRecord, UsageSummary } from "../../domain/usage.js";
import { parseInput } from "../../domain/validation.js";
import type {
  ExperimentListQuery,
  ExperimentRecords,
  ExperimentRecordsPage,
  ExperimentScoringRows,
} from "../experiment-records.js";
import { parseAppendAudit, parseAppendRecords, parseClaimTurn } from "../fast-inputs.js";
import type { ClaimedTurn, SessionStore, StoredSessionConfig } from "../session-store.js";
import {
  type AppendAuditOptions,
  AppendCallPayloadOptions,
  AppendMessageOptions,
  AppendMessagesOptions,
  type AppendRecordsOptions,
  type AppendRecordsResult,
  AppendUsageOptions,
  type ClaimTurnOptions,
  CompleteTurnOptions,
  CreateSessionOptions,
  EnsureSessionOptions,
  SessionId,
  StartTurnOptions,
} from "../store-inputs.js";
import { CallPayloads } from "./call-payloads.js";
import { listExperimentSummaries, readExperimentRecords } from "./experiment-records.js";
import { readExperimentScoringRows } from "./experiment-scoring-rows.js";
import { openDatabase } from "./open-database.js";
import { auditRowParams, RecordBatch, usageRowParams } from "./record-batch.js";
import {
  type AuditRow,
  type ListedOverviewRow,
  type ListedRow,
  type MessageRow,
  type SessionRow,
  type TurnRow,
  toAuditRecord,
  toMessageRecord,
  toMessageRowParams,
  toSessionOverview,
  toSessionRecord,
  toTurnRecord,
  toUsageCallRecord,
  type UsageRow,
} from "./rows.js";
import { SessionPages } from "./session-pages.js";
import { SessionTransfer } from "./session-transfer.js";
import { prepareStatements, type Statements } from "./statements.js";
import { write } from "./storage-error.js";
import { TokenFold } from "./token-fold.js";
import { TurnClaim } from "./turn-claim.js";
import { sumRollups, UsageRollups } from "./usage-rollups.js";
import { WalKeeper } from "./wal-keeper.js";

const now = () => new Date().toISOString();

function isConstraint(error: unknown, code: string): boolean {
  return (error as { code?: unknown }).code === code;
}

export interface SqliteStoreOptions {
  /**
   * Caps the database at this many pages (SQLite's max_page_count): a write past it fails as on a
   * full disk (SQLITE_FULL). Tests use it to fill the "disk" for real.
   */
  max_page_count?: number;
}

/** The seed's session store over better-sqlite3: synchronous, one connection per instance. */
export class SqliteSessionStore implements SessionStore {
  readonly path: string;
  /** False for an in-memory database: it keeps nothing once closed. */
  readonly persistent: boolean;
  /** The journal mode in force: "wal", or "delete" where WAL is not supported (say so). */
  readonly journal_mode: string;
  private readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly tokenFold: TokenFold;
  private readonly rollups: UsageRollups;
  private readonly transfer: SessionTransfer;
  private readonly payloads: CallPayloads;
  private readonly turnClaim: TurnClaim;
  private readonly walKeeper: WalKeeper;
  private readonly pages: SessionPages;
  private readonly batch: RecordBatch;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path;
    const opened = openDatabase(path);
    if (options.max_page_count !== undefined) {
      opened.db.pragma(`max_page_count = ${Math.max(1, Math.floor(options.max_page_count))}`);
    }
    this.db = opened.db;
    this.persistent = opened.persistent;
    this.journal_mode = opened.journal_mode;
    this.sql = prepareStatements(this.db);
    this.turnClaim = new TurnClaim(this.db, this.sql);
    this.walKeeper = new WalKeeper(this.db, opened.journal_mode === "wal");
    this.tokenFold = new TokenFold(this.db);
    this.rollups = new UsageRollups(this.db);
    this.transfer = new SessionTransfer(this.db, this.sql);
    this.payloads = new CallPayloads(this.db);
    this.pages = new SessionPages(this.db, this.sql);
    this.batch = new RecordBatch(this.db, this.sql, this.payloads, this.rollups);
  }

  close(): void {
    this.walKeeper.stop();
    this.db.close();
  }

  /** The database's size in pages (see SqliteStoreOptions.max_page_count). */
  pageCount(): number {
    return this.db.pragma("page_count", { simple: true }) as number;
  }

  createSession(options: CreateSessionOptions): string {
    const input = parseInput(CreateSessionOptions, options, "createSession");
    const id = input.session_id ?? randomUUID();
    const timestamp = now();
    try {
      this.sql.insertSession.run(
        id,
        input.title,
        timestamp,
        timestamp,
        JSON.stringify(input.config),
      );
    } catch (error) {
      if (isConstraint(error, "SQLITE_CONSTRAINT_PRIMARYKEY")) throw new SessionExistsError(id);
      throw error;
    }
    return id;
  }

  ensureSession(sessionId: string, options: EnsureSessionOptions): string {
    const id = parseInput(SessionId, sessionId, "ensureSession: session_id");
    const input = parseInput(EnsureSessionOptions, options, "ensureSession");
    return this.db
      .transaction(() => {
        const existing = this.getSession(id);
        if (existing === null) return this.createSession({ ...input, session_id: id });
        const requested = input.config.tool_invocation_mode;
        if (existing.tool_invocation_mode !== requested) {
          throw new SessionModeMismatchError(existing.tool_invocation_mode, requested);
        }
        return id;
      })
      .immediate();
  }

  getSession(sessionId: string): SessionRecord | null {
    const row = this.sql.selectSession.get(sessionId) as SessionRow | undefined;
    return row === undefined ? null : toSessionRecord(row);
  }

  getStoredSessionConfig(sessionId: string): StoredSessionConfig | null {
    return (this.sql.selectStoredConfig.get(sessionId) as StoredSessionConfig | undefined) ?? null;
  }

  /**
   * The ids that start with `prefix`, in id order, at most `limit` of them (the CLI accepts a
   * unique prefix as `git` does). GLOB on the primary key reads an index range, not the table;
   * its wildcards in the prefix are bracketed so they match themselves.
   */
  findSessionIdsByPrefix(prefix: string, limit: number): string[] {
    const pattern = `${prefix.replace(/[*?[]/g, (c) => `[${c}]`)}*`;
    return (
      this.db
        .prepare("SELECT id FROM sessions WHERE id GLOB ? ORDER BY id LIMIT ?")
        .all(pattern, Math.max(1, Math.floor(limit))) as { id: string }[]
    ).map((row) => row.id);
  }

  findSessionsByExperiment(experimentId: string): SessionRecord[] {
    return (this.sql.selectSessionsByExperiment.all(experimentId) as SessionRow[]).map(
      toSessionRecord,
    );
  }

  listSessions(): SessionListItem[] {
    this.tokenFold.foldIfLarge();
    return this.db.transaction(() => {
      const tail = this.tokenFold.tail();
      // total_tokens holds the folded tokens; the few sessions with calls above the fold add them.
      const rows = JSON.parse(this.sql.listSessions.pluck().get() as string) as ListedRow[];
      return rows.map((row) => ({
        id: row[0],
        title: row[1],
        created_at: row[2],
        updated_at: row[3],
        turn_count: row[4],
        total_tokens: tail.size > 0 ? row[5] + (tail.get(row[0]) ?? 0) : row[5],
      }));
    })();
  }

  listSessionOverviews(): SessionOverview[] {
    this.tokenFold.foldIfLarge();
    return this.db.transaction(() => {
      const tail = this.tokenFold.tail();
      return (this.sql.listSessionOverviews.all() as ListedOverviewRow[]).map((row) =>
        toSessionOverview(row, row.folded_tokens + (tail.get(row.id) ?? 0)),
      );
    })();
  }

  deleteSession(sessionId: string): void {
    this.db
      .transaction(() => {
        this.requireSession(sessionId);
        this.transfer.delete(sessionId);
      })
      .immediate();
  }

  exportSession(sessionId: string): SessionExport {
    // One read transaction: a consistent snapshot even while another connection writes.
    return this.db.transaction(() => {
      const session = this.getSession(sessionId);
      if (session === null) throw new SessionNotFoundError(sessionId);
      return {
        format: SESSION_EXPORT_FORMAT,
        version: SESSION_EXPORT_VERSION,
        exported_at: now(),
        session,
        turns: this.listTurns(sessionId),
        messages: this.listMessages(sessionId),
        audit: this.listAuditLogs(sessionId),
        usage: this.usageSummary(sessionId),
      } satisfies SessionExport;
    })();
  }

  importSession(document: unknown, options: ImportSessionOptions = {}): string {
    const input = parseInput(ImportSessionOptions, options, "importSession");
    const parsed = parseInput(SessionExportDocument, document, "importSession");
    const id = parseInput(
      SessionId,
      input.session_id ?? parsed.session.id,
      "importSession: session_id",
    );
    this.db.transaction(() => this.transfer.insert(parsed, id)).immediate();
    return id;
  }

  startTurn(sessionId: string, options: StartTurnOptions): void {
    const input = parseInput(StartTurnOptions, options, "startTurn");
    this.db
      .transaction(() => {
        this.requireSession(sessionId);
        const timestamp = now();
        try {
          this.sql.insertTurn.run(
            sessionId,
            input.turn_index,
            input.user_message,
            timestamp,
            input.runner,
          );
        } catch (error) {
          if (isConstraint(error, "SQLITE_CONSTRAINT_PRIMARYKEY")) {
            throw new TurnExistsError(sessionId, input.turn_index);
          }
          throw error;
        }
        this.sql.countTurn.run(timestamp, sessionId);
      })
      .immediate();
  }

  claimTurn(sessionId: string, options: ClaimTurnOptions): ClaimedTurn {
    const input = parseClaimTurn(options);
    return write(() => this.turnClaim.claim(sessionId, input, now));
  }

  completeTurn(sessionId: string, options: CompleteTurnOptions): void {
    const input = parseInput(CompleteTurnOptions, options, "completeTurn");
    write(() =>
      this.db
        .transaction(() => {
          const timestamp = now();
          const { changes } = this.sql.completeTurn.run(
            timestamp,
            input.wall_time_ms,
            input.status,
            sessionId,
            input.turn_index,
          );
          if (changes === 0) throw new TurnNotFoundError(sessionId, input.turn_index);
          this.sql.touchSession.run(timestamp, sessionId);
        })
        .immediate(),
    );
  }

  listTurns(sessionId: string): TurnRecord[] {
    return (this.sql.listTurns.all(sessionId) as TurnRow[]).map(toTurnRecord);
  }

  appendMessage(sessionId: string, options: AppendMessageOptions): void {
    const input = parseInput(AppendMessageOptions, options, "appendMessage");
    this.writeMessages(sessionId, input.turn_index, [input.message]);
  }

  appendMessages(sessionId: string, options: AppendMessagesOptions): void {
    const input = parseInput(AppendMessagesOptions, options, "appendMessages");
    this.writeMessages(sessionId, input.turn_index, input.messages);
  }

  appendAudit(sessionId: string, options: AppendAuditOptions): void {
    const input = parseAppendAudit(options, "appendAudit");
    const { changes } = write(() =>
      this.sql.insertAudit.run(auditRowParams(sessionId, input, now())),
    );
    if (changes === 0) throw new SessionNotFoundError(sessionId);
  }

  appendUsage(sessionId: string, options: AppendUsageOptions): boolean {
    const input = parseInput(AppendUsageOptions, options, "appendUsage");
    const { changes } = write(() =>
      this.sql.insertUsage.run(usageRowParams(sessionId, input, now())),
    );
    if (changes === 1) return true;
    // Nothing inserted: either the turn is unknown, or the metric key was recorded before.
    this.requireTurn(sessionId, input.turn_index);
    return false;
  }

  appendCallPayload(sessionId: string, options: AppendCallPayloadOptions): boolean {
    const input = parseInput(AppendCallPayloadOptions, options, "appendCallPayload");
    // Compressed before the write: the write lock is not held while brotli runs.
    if (write(() => this.payloads.insert(sessionId, input, now()))) return true;
    this.requireTurn(sessionId, input.turn_index);
    return false;
  }

  getCallPayload(sessionId: string, metricKey: string): CallPayloadRecord | null {
    return this.payloads.get(sessionId, metricKey);
  }

  listMessages(sessionId: string): MessageRecord[] {
    return (this.sql.listMessages.all(sessionId) as MessageRow[]).map(toMessageRecord);
  }

  listAuditLogs(sessionId: string): AuditRecord[] {
    return (this.sql.listAudit.all(sessionId) as AuditRow[]).map(toAuditRecord);
  }

  usageSummary(sessionId: string): UsageSummary {
    return this.db.transaction(() => {
      const session = this.getSession(sessionId);
      // A legacy file may hold calls of a session it has no row for: those use the default mode.
      const mode = session?.tool_invocation_mode ?? modeOf({});
      const calls = (this.sql.listUsage.all(sessionId) as UsageRow[]).map((row) =>
        toUsageCallRecord(row, mode),
      );
      return { calls, ...this.usageRollups(sessionId) };
    })();
  }

  usageRollups(sessionId: string): Omit<UsageSummary, "calls"> {
    const turns = this.rollups.turns(sessionId);
    return { turns, session: sumRollups(turns) };
  }

  listSessionPage(query: SessionQuery): SessionPage {
    return this.pages.listSessionPage(query);
  }

  listExperimentSummaries(query?: ExperimentListQuery): Page<ExperimentListItem> {
    return listExperimentSummaries(this.db, query);
  }

  listUsageCalls(sessionId: string, page: PageRequest): Page<UsageCallRecord> {
    return this.pages.listUsageCalls(sessionId, page);
  }

  findUsageCall(sessionId: string, metricKey: string): UsageCallRecord | null {
    return this.pages.findUsageCall(sessionId, metricKey);
  }

  listTurnPage(sessionId: string, page: PageRequest): Page<TurnRecord> {
    return this.pages.listTurnPage(sessionId, page);
  }

  listMessagePage(sessionId: string, page: PageRequest): Page<MessageRecord> {
    return this.pages.listMessagePage(sessionId, page);
  }

  listAuditPage(sessionId: string, page: PageRequest): Page<AuditRecord> {
    return this.pages.listAuditPage(sessionId, page);
  }

  experimentRecords(experimentId: string, page?: ExperimentRecordsPage): ExperimentRecords {
    return readExperimentRecords(this.db, experimentId, page);
  }

  experimentScoringRows(experimentId: string, page?: ExperimentRecordsPage): ExperimentScoringRows {
    return readExperimentScoringRows(this.db, experimentId, page);
  }

  appendRecords(sessionId: string, records: AppendRecordsOptions): AppendRecordsResult {
    const input = parseAppendRecords(records);
    return write(() => this.batch.append(sessionId, input, now()));
  }

  private writeMessages(sessionId: string, turnIndex: number, messages: ChatMessage[]): void {
    write(() =>
      this.db
        .transaction(() => {
          this.requireTurn(sessionId, turnIndex);
          const timestamp = now();
          for (const message of messages) {
            this.sql.insertMessage.run(
              toMessageRowParams(sessionId, turnIndex, message, timestamp),
            );
          }
          this.sql.touchSession.run(timestamp, sessionId);
        })
        .immediate(),
    );
  }

  private requireTurn(sessionId: string, turnIndex: number): void {
    if (this.sql.selectTurn.get(sessionId, turnIndex) === undefined) {
      this.requireSession(sessionId);
      throw new TurnNotFoundError(sessionId, turnIndex);
    }
  }

  private requireSession(sessionId: string): void {
    if (this.sql.selectSessionId.get(sessionId) === undefined) {
      throw new SessionNotFoundError(sessionId);
    }
  }
}
