import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { CallPayloadRecord } from "../../domain/call-capture.js";
import {
  AgentLabError,
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
import {
  ImportSessionOptions,
  SESSION_EXPORT_FORMAT,
  SESSION_EXPORT_VERSION,
  type SessionExport,
  SessionExportDocument,
} from "../../domain/session-export.js";
import { type SessionPage, SessionQuery } from "../../domain/session-query.js";
import type { UsageCallRecord, UsageSummary } from "../../domain/usage.js";
import { parseInput } from "../../domain/validation.js";
import { payloadRow } from "../call-payload-codec.js";
import type {
  ExperimentListQuery,
  ExperimentRecords,
  ExperimentRecordsPage,
  ExperimentScoringRows,
} from "../experiment-records.js";
import { parseAppendAudit, parseAppendRecords, parseClaimTurn } from "../fast-inputs.js";
import type { ClaimedTurn, SessionStore, StoredSessionConfig } from "../session-store.js";
import { auditRowParams, usageRowParams } from "../sqlite/record-batch.js";
import {
  type ListedOverviewRow,
  type SessionRow,
  toMessageRowParams,
  toSessionOverview,
  toSessionRecord,
} from "../sqlite/rows.js";
import { USAGE_COLUMNS } from "../sqlite/statements.js";
import { sumRollups } from "../sqlite/usage-rollups.js";
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
import { insertPayload, readPayload } from "./call-payloads.js";
import {
  abandonConnections,
  createPool,
  describeTarget,
  openError,
  type PoolOptions,
  watchConnection,
  withPasswordFile,
} from "./connection.js";
import {
  experimentScoringRows,
  listExperimentSummaries,
  readExperimentRecords,
} from "./experiment-records.js";
import { migrate } from "./migrate.js";
import { AUDIT_COLUMNS, MESSAGE_COLUMNS, run, valuesOf } from "./queries.js";
import { appendBatch } from "./record-batch.js";
import { sessionListPage, titleSearchCollation } from "./session-list-query.js";
import { SessionPages } from "./session-pages.js";
import { readAudit, readMessages, readTurns, readUsage } from "./session-reads.js";
import { deleteSessionRows, insertSessionRows } from "./session-transfer.js";
import { inTransaction, READ_SNAPSHOT, write } from "./transaction.js";
import { claimTurn } from "./turn-claim.js";
import { DEFAULT_LEASE_MS, TurnLeases } from "./turn-leases.js";
import { turnRollups } from "./usage-rollups.js";

const now = () => new Date().toISOString();

export interface PostgresStoreOptions extends PoolOptions {
  /**
   * How long a running turn stays claimed without its store renewing the lease (default 30 s):
   * the longest a crashed runner's session stays blocked. Tests use a short one.
   */
  lease_ms?: number;
}

/**
 * The session store on a PostgreSQL server, with the same behaviour as SqliteSessionStore (the
 * same contract suites run against both). Shared by any number of processes on any hosts: writes
 * that must be atomic are one transaction, a turn claim takes the session's row lock, and a
 * running turn is held by a lease its store renews (turn-leases.ts).
 */
export class PostgresSessionStore implements SessionStore {
  readonly persistent = true;
  /** The store's pool: others may use it for their own tables (e.g. the run queue). */
  readonly pool: pg.Pool;
  /** Where it points, without the password: `database NAME on HOST:PORT`. */
  readonly target: string;
  /** Whether this open brought the schema up to date (false: it was current already). */
  readonly migrated: boolean;
  private readonly leases: TurnLeases;
  private readonly pages: SessionPages;
  #closed: Promise<void> | undefined;

  private constructor(pool: pg.Pool, target: string, leaseMs: number, migrated: boolean) {
    this.pool = pool;
    this.target = target;
    this.migrated = migrated;
    this.leases = new TurnLeases(pool, leaseMs);
    this.pages = new SessionPages(pool);
  }

  /**
   * Connects, brings the schema up to date (migrate.ts) and returns a ready store. A failure is a
   * DatabaseOpenError naming host:port and the database, never the URL's password.
   */
  static async open(
    url: string,
    options: PostgresStoreOptions = {},
  ): Promise<PostgresSessionStore> {
    const target = describeTarget(url);
    const pool = createPool(await withPasswordFile(url), options);
    let migrated: boolean;
    try {
      const client = await pool.connect();
      const watch = watchConnection(client);
      try {
        migrated = await migrate(client, target);
      } finally {
        watch.done();
        client.release(watch.lost());
      }
    } catch (error) {
      abandonConnections(pool);
      await pool.end().catch(() => {});
      // A lab error (schema too new) passes as it is; the driver's gets the target named.
      if (error instanceof AgentLabError) throw error;
      throw openError(url, error);
    }
    const leaseMs = Math.max(50, Math.floor(options.lease_ms ?? DEFAULT_LEASE_MS));
    return new PostgresSessionStore(pool, target, leaseMs, migrated);
  }

  close(): Promise<void> {
    this.#closed ??= this.leases.close().then(() => this.pool.end());
    return this.#closed;
  }

  async createSession(options: CreateSessionOptions): Promise<string> {
    const input = parseInput(CreateSessionOptions, options, "createSession");
    const id = input.session_id ?? randomUUID();
    if (!(await this.insertSession(id, input))) throw new SessionExistsError(id);
    return id;
  }

  async ensureSession(sessionId: string, options: EnsureSessionOptions): Promise<string> {
    const id = parseInput(SessionId, sessionId, "ensureSession: session_id");
    const input = parseInput(EnsureSessionOptions, options, "ensureSession");
    // Created when missing, in one statement; otherwise the stored mode must be the one asked.
    if (await this.insertSession(id, input)) return id;
    const existing = await this.getSession(id);
    if (existing === null) throw new SessionNotFoundError(id);
    const requested = input.config.tool_invocation_mode;
    if (existing.tool_invocation_mode !== requested) {
      throw new SessionModeMismatchError(existing.tool_invocation_mode, requested);
    }
    return id;
  }

  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const row = (await run<SessionRow>(this.pool, "selectSession", [sessionId])).rows[0];
    return row === undefined ? null : toSessionRecord(row);
  }

  async getStoredSessionConfig(sessionId: string): Promise<StoredSessionConfig | null> {
    const result = await run<StoredSessionConfig>(this.pool, "selectStoredConfig", [sessionId]);
    return result.rows[0] ?? null;
  }

  /** LIKE on the "C"-collated primary key reads an index range; its wildcards are escaped. */
  async findSessionIdsByPrefix(prefix: string, limit: number): Promise<string[]> {
    const pattern = `${prefix.replace(/[\\%_]/g, "\\$&")}%`;
    const result = await run<{ id: string }>(this.pool, "selectIdsByPrefix", [
      pattern,
      Math.max(1, Math.floor(limit)),
    ]);
    return result.rows.map((row) => row.id);
  }

  async findSessionsByExperiment(experimentId: string): Promise<SessionRecord[]> {
    const result = await run<SessionRow>(this.pool, "selectSessionsByExperiment", [experimentId]);
    return result.rows.map(toSessionRecord);
  }

  async listSessions(): Promise<SessionListItem[]> {
    return withoutJit(this.pool, async (client) => {
      return (await run<SessionListItem>(client, "listSessions", [])).rows;
    });
  }

  async listSessionOverviews(): Promise<SessionOverview[]> {
    return withoutJit(this.pool, async (client) => {
      const result = await run<ListedOverviewRow>(client, "listSessionOverviews", []);
      return result.rows.map((row) => toSessionOverview(row, row.folded_tokens));
    });
  }

  async deleteSession(sessionId: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      // The row lock first: a claim of this session waits, then finds no session.
      const found = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [
        sessionId,
      ]);
      if (found.rowCount === 0) throw new SessionNotFoundError(sessionId);
      await deleteSessionRows(client, sessionId);
    });
  }

  async exportSession(sessionId: string): Promise<SessionExport> {
    // One snapshot: a consistent document even while another connection writes.
    return inTransaction(
      this.pool,
      async (client) => {
        const row = (await run<SessionRow>(client, "selectSession", [sessionId])).rows[0];
        if (row === undefined) throw new SessionNotFoundError(sessionId);
        const session = toSessionRecord(row);
        return {
          format: SESSION_EXPORT_FORMAT,
          version: SESSION_EXPORT_VERSION,
          exported_at: now(),
          session,
          turns: await readTurns(client, sessionId),
          messages: await readMessages(client, sessionId),
          audit: await readAudit(client, sessionId),
          usage: await readUsage(client, sessionId, session),
        } satisfies SessionExport;
      },
      READ_SNAPSHOT,
    );
  }

  async importSession(document: unknown, options: ImportSessionOptions = {}): Promise<string> {
    const input = parseInput(ImportSessionOptions, options, "importSession");
    const parsed = parseInput(SessionExportDocument, document, "importSession");
    const id = parseInput(
      SessionId,
      input.session_id ?? parsed.session.id,
      "importSession: session_id",
    );
    await inTransaction(this.pool, (client) => insertSessionRows(client, parsed, id));
    return id;
  }

  async startTurn(sessionId: string, options: StartTurnOptions): Promise<void> {
    const input = parseInput(StartTurnOptions, options, "startTurn");
    await inTransaction(this.pool, async (client) => {
      const timestamp = now();
      if ((await run(client, "countTurn", [timestamp, sessionId])).rowCount === 0) {
        throw new SessionNotFoundError(sessionId);
      }
      const inserted = await run(client, "insertTurn", [
        sessionId,
        input.turn_index,
        input.user_message,
        timestamp,
        input.runner,
        this.leases.leaseMs,
      ]);
      if (inserted.rowCount === 0) throw new TurnExistsError(sessionId, input.turn_index);
    });
    this.leases.hold(sessionId, input.turn_index);
  }

  async claimTurn(sessionId: string, options: ClaimTurnOptions): Promise<ClaimedTurn> {
    const input = parseClaimTurn(options);
    const claimed = await inTransaction(this.pool, (client) =>
      claimTurn(client, sessionId, input, now(), this.leases.leaseMs, (session, turn) =>
        this.leases.holds(session, turn),
      ),
    );
    for (const turnIndex of claimed.interrupted) this.leases.release(sessionId, turnIndex);
    this.leases.hold(sessionId, claimed.turn_index);
    return claimed;
  }

  async completeTurn(sessionId: string, options: CompleteTurnOptions): Promise<void> {
    const input = parseInput(CompleteTurnOptions, options, "completeTurn");
    await inTransaction(this.pool, async (client) => {
      const timestamp = now();
      const { rowCount } = await run(client, "completeTurn", [
        timestamp,
        input.wall_time_ms,
        input.status,
        sessionId,
        input.turn_index,
      ]);
      if (rowCount === 0) throw new TurnNotFoundError(sessionId, input.turn_index);
      await run(client, "touchSession", [timestamp, sessionId]);
    });
    this.leases.release(sessionId, input.turn_index);
  }

  listTurns(sessionId: string): Promise<TurnRecord[]> {
    return readTurns(this.pool, sessionId);
  }

  async appendMessage(sessionId: string, options: AppendMessageOptions): Promise<void> {
    const input = parseInput(AppendMessageOptions, options, "appendMessage");
    await this.writeMessages(sessionId, input.turn_index, [input.message]);
  }

  async appendMessages(sessionId: string, options: AppendMessagesOptions): Promise<void> {
    const input = parseInput(AppendMessagesOptions, options, "appendMessages");
    await this.writeMessages(sessionId, input.turn_index, input.messages);
  }

  async appendAudit(sessionId: string, options: AppendAuditOptions): Promise<void> {
    const input = parseAppendAudit(options, "appendAudit");
    const params = valuesOf(AUDIT_COLUMNS, auditRowParams(sessionId, input, now()));
    const { rowCount } = await write(() => run(this.pool, "insertAudit", params));
    if (rowCount === 0) throw new SessionNotFoundError(sessionId);
  }

  /** One named statement, one round trip; nothing is read back unless nothing was inserted. */
  async appendUsage(sessionId: string, options: AppendUsageOptions): Promise<boolean> {
    const input = parseInput(AppendUsageOptions, options, "appendUsage");
    const params = valuesOf(USAGE_COLUMNS, usageRowParams(sessionId, input, now()));
    const { rowCount } = await write(() => run(this.pool, "insertUsage", params));
    if (rowCount === 1) return true;
    // Nothing inserted: either the turn is unknown, or the metric key was recorded before.
    await this.requireTurn(sessionId, input.turn_index);
    return false;
  }

  async appendCallPayload(sessionId: string, options: AppendCallPayloadOptions): Promise<boolean> {
    const input = parseInput(AppendCallPayloadOptions, options, "appendCallPayload");
    const row = payloadRow(sessionId, input, now());
    if (await write(() => insertPayload(this.pool, row))) return true;
    await this.requireTurn(sessionId, input.turn_index);
    return false;
  }

  getCallPayload(sessionId: string, metricKey: string): Promise<CallPayloadRecord | null> {
    return readPayload(this.pool, sessionId, metricKey);
  }

  listMessages(sessionId: string): Promise<MessageRecord[]> {
    return readMessages(this.pool, sessionId);
  }

  listAuditLogs(sessionId: string): Promise<AuditRecord[]> {
    return readAudit(this.pool, sessionId);
  }

  usageSummary(sessionId: string): Promise<UsageSummary> {
    return inTransaction(
      this.pool,
      async (client) => {
        const row = (await run<SessionRow>(client, "selectSession", [sessionId])).rows[0];
        return readUsage(client, sessionId, row === undefined ? null : toSessionRecord(row));
      },
      READ_SNAPSHOT,
    );
  }

  async usageRollups(sessionId: string): Promise<Omit<UsageSummary, "calls">> {
    const turns = await turnRollups(this.pool, sessionId);
    return { turns, session: sumRollups(turns) };
  }

  listSessionPage(query: SessionQuery): Promise<SessionPage> {
    const parsed = parseInput(SessionQuery, query, "listSessionPage");
    return write(async () => {
      // Read at the first title search, not at every open (most commands never search).
      const collation = parsed.q === undefined ? null : await this.#collation();
      return sessionListPage(this.pool, parsed, collation);
    });
  }

  /** The collation the title search folds case by (session-list-query.ts); read again if it failed. */
  #titleCollation: Promise<string | null> | undefined;

  #collation(): Promise<string | null> {
    this.#titleCollation ??= titleSearchCollation(this.pool).catch((error: unknown) => {
      this.#titleCollation = undefined;
      throw error;
    });
    return this.#titleCollation;
  }

  listExperimentSummaries(query?: ExperimentListQuery): Promise<Page<ExperimentListItem>> {
    return write(() => listExperimentSummaries(this.pool, query));
  }

  listUsageCalls(sessionId: string, page: PageRequest): Promise<Page<UsageCallRecord>> {
    return this.pages.listUsageCalls(sessionId, page);
  }

  findUsageCall(sessionId: string, metricKey: string): Promise<UsageCallRecord | null> {
    return this.pages.findUsageCall(sessionId, metricKey);
  }

  listTurnPage(sessionId: string, page: PageRequest): Promise<Page<TurnRecord>> {
    return this.pages.listTurnPage(sessionId, page);
  }

  listMessagePage(sessionId: string, page: PageRequest): Promise<Page<MessageRecord>> {
    return this.pages.listMessagePage(sessionId, page);
  }

  listAuditPage(sessionId: string, page: PageRequest): Promise<Page<AuditRecord>> {
    return this.pages.listAuditPage(sessionId, page);
  }

  experimentRecords(
    experimentId: string,
    page?: ExperimentRecordsPage,
  ): Promise<ExperimentRecords> {
    return readExperimentRecords(this.pool, experimentId, page);
  }

  experimentScoringRows(
    experimentId: string,
    page?: ExperimentRecordsPage,
  ): Promise<ExperimentScoringRows> {
    return experimentScoringRows(this.pool, experimentId, page);
  }

  async appendRecords(
    sessionId: string,
    records: AppendRecordsOptions,
  ): Promise<AppendRecordsResult> {
    const input = parseAppendRecords(records);
    const createdAt = now();
    // Compressed before the transaction opens: no lock is held while brotli runs.
    const payloadRows = input.payloads.map((payload) => payloadRow(sessionId, payload, createdAt));
    const result = await inTransaction(this.pool, (client) =>
      appendBatch(client, sessionId, input, payloadRows, createdAt),
    );
    if (input.complete_turn !== undefined) {
      this.leases.release(sessionId, input.complete_turn.turn_index);
    }
    return result;
  }

  /** True when inserted; false when the id is taken. */
  private async insertSession(
    id: string,
    input: { title: string; config: Record<string, unknown> },
  ): Promise<boolean> {
    const timestamp = now();
    const params = [id, input.title, timestamp, timestamp, JSON.stringify(input.config)];
    return (await write(() => run(this.pool, "insertSession", params))).rowCount === 1;
  }

  private async writeMessages(
    sessionId: string,
    turnIndex: number,
    messages: readonly ChatMessage[],
  ): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const timestamp = now();
      if (
        (await run(client, "touchSessionOfTurn", [timestamp, sessionId, turnIndex])).rowCount === 0
      ) {
        await this.requireTurn(client, sessionId, turnIndex);
      }
      for (const message of messages) {
        await run(
          client,
          "insertMessage",
          valuesOf(MESSAGE_COLUMNS, toMessageRowParams(sessionId, turnIndex, message, timestamp)),
        );
      }
    });
  }

  private async requireTurn(
    ...args: [pg.Pool | pg.ClientBase, string, number] | [string, number]
  ): Promise<void> {
    const [db, sessionId, turnIndex] = args.length === 3 ? args : [this.pool, ...args];
    if ((await run(db, "selectTurn", [sessionId, turnIndex])).rowCount === 0) {
      if ((await run(db, "selectSessionId", [sessionId])).rowCount === 0) {
        throw new SessionNotFoundError(sessionId);
      }
      throw new TurnNotFoundError(sessionId, turnIndex);
    }
  }
}

/**
 * A whole-list read without JIT: its estimated cost (a sum per session, 100,000 of them) is over
 * JIT's threshold, and compiling took 47 ms of a 200 ms read (npm run bench -- pg). Set for this
 * transaction only (`SET LOCAL`): a session-wide setting would stay on a pooler's shared server
 * connection and reach its other clients. A server before 11 has no such setting and is left so.
 */
async function withoutJit<T>(
  pool: pg.Pool,
  read: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return inTransaction(pool, async (client) => {
    await client.query(
      "SELECT set_config('jit', 'off', true) WHERE current_setting('server_version_num')::int >= 110000",
    );
    return read(client);
  });
}
