import type { CallPayloadRecord } from "../domain/call-capture.js";
import type { ExperimentListItem } from "../domain/experiment.js";
import type { Page, PageRequest } from "../domain/pagination.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionListItem,
  SessionOverview,
  SessionRecord,
  TurnRecord,
} from "../domain/records.js";
import type { ImportSessionOptions, SessionExport } from "../domain/session-export.js";
import type { SessionPage, SessionQuery } from "../domain/session-query.js";
import type { UsageCallRecord, UsageSummary } from "../domain/usage.js";
import type {
  ExperimentListQuery,
  ExperimentRecords,
  ExperimentRecordsPage,
  ExperimentScoringRows,
} from "./experiment-records.js";
import type {
  AppendAuditOptions,
  AppendCallPayloadOptions,
  AppendMessageOptions,
  AppendMessagesOptions,
  AppendRecordsOptions,
  AppendRecordsResult,
  AppendUsageOptions,
  ClaimTurnOptions,
  CompleteTurnOptions,
  CreateSessionOptions,
  EnsureSessionOptions,
  StartTurnOptions,
} from "./store-inputs.js";

/** How the runtime hands every store its own claims and batches (runtime-records.ts): the port's. */
export {
  type RuntimeAudit,
  type RuntimeClaim,
  type RuntimeRecords,
  type RuntimeUsage,
  runtimeClaim,
  runtimeRecords,
} from "./runtime-records.js";
/** The session as a runner last left it, which a claim may expect (`ClaimTurnOptions.expected`). */
export type { ExpectedSession } from "./store-inputs.js";

/** SQLite answers synchronously, a PostgreSQL backend will not; callers simply `await` either. */
export type Awaitable<T> = T | Promise<T>;

/**
 * A session's config as stored (its JSON text) and when it was last written: for a caller that
 * keeps what it parsed by the text, so a session's every turn need not parse the same config.
 */
export interface StoredSessionConfig {
  config_json: string;
  updated_at: string;
  /**
   * Changes whenever the session's row is written anew (an import over a deleted session, a
   * session deleted and created again with its id), and only then: an import keeps the
   * document's `updated_at`, so that alone cannot tell the session from the one it replaced.
   */
  incarnation: number;
}

/** What `claimTurn` took: the new turn's index and the dead runners' turns it marked interrupted. */
export interface ClaimedTurn {
  turn_index: number;
  interrupted: number[];
}

/**
 * The lab's memory, as the seed's test suite defines it. Every implementation runs the same
 * contract suite (`src/store/session-store.contract.ts`).
 */
export interface SessionStore {
  /** Creates a session and returns its id (a fresh UUID unless `session_id` is given). */
  createSession(options: CreateSessionOptions): Awaitable<string>;
  /** Creates the session when missing; refuses, changing nothing, when its mode differs. */
  ensureSession(sessionId: string, options: EnsureSessionOptions): Awaitable<string>;
  getSession(sessionId: string): Awaitable<SessionRecord | null>;
  /** The session's config as its stored JSON text, and its `updated_at`; null: unknown session. */
  getStoredSessionConfig(sessionId: string): Awaitable<StoredSessionConfig | null>;
  /** Most recently updated first. */
  listSessions(): Awaitable<SessionListItem[]>;
  /**
   * The ids that start with `prefix` (taken literally: no character is a wildcard), in id order,
   * at most `limit` of them: the CLI takes a unique prefix of an id, as git takes a commit's.
   */
  findSessionIdsByPrefix(prefix: string, limit: number): Awaitable<string[]>;
  /** The sessions whose config is tagged `experiment.id = experimentId`, oldest first. */
  findSessionsByExperiment(experimentId: string): Awaitable<SessionRecord[]>;
  startTurn(sessionId: string, options: StartTurnOptions): Awaitable<void>;
  /**
   * Starts the session's next turn, all or nothing and atomically across processes: refuses with
   * TurnInProgressError while a turn of a live runner is running, marks a dead runner's running
   * turn `interrupted` (with a `turn_interrupted` audit row), picks the next turn index, stores the
   * turn as running with the user message as its first message.
   */
  claimTurn(sessionId: string, options: ClaimTurnOptions): Awaitable<ClaimedTurn>;
  /** Ends a turn with its measured wall time and how it ended (default "completed"). */
  completeTurn(sessionId: string, options: CompleteTurnOptions): Awaitable<void>;
  /** The session's turns in order; legacy rows without a status read as completed or running. */
  listTurns(sessionId: string): Awaitable<TurnRecord[]>;
  appendMessage(sessionId: string, options: AppendMessageOptions): Awaitable<void>;
  /** Writes a protocol group (assistant tool calls and their replies) all or nothing. */
  appendMessages(sessionId: string, options: AppendMessagesOptions): Awaitable<void>;
  appendAudit(sessionId: string, options: AppendAuditOptions): Awaitable<void>;
  /**
   * Records one measured call. Returns false when its `metric_key` was already recorded for the
   * session: retries are idempotent.
   */
  appendUsage(sessionId: string, options: AppendUsageOptions): Awaitable<boolean>;
  /**
   * Keeps one call's captured request and response (compressed), keyed by the metric key of its
   * usage row. Returns false when that key already has a payload (retries are idempotent).
   */
  appendCallPayload(sessionId: string, options: AppendCallPayloadOptions): Awaitable<boolean>;
  /** The captured payload of the call with this metric key, or null when none was kept. */
  getCallPayload(sessionId: string, metricKey: string): Awaitable<CallPayloadRecord | null>;
  listMessages(sessionId: string): Awaitable<MessageRecord[]>;
  listAuditLogs(sessionId: string): Awaitable<AuditRecord[]>;
  usageSummary(sessionId: string): Awaitable<UsageSummary>;
  /** The `turns` and `session` parts of `usageSummary`, without reading every call. */
  usageRollups(sessionId: string): Awaitable<Omit<UsageSummary, "calls">>;
  /** Removes the session with its turns, messages, audit log, usage and payloads, all or nothing. */
  deleteSession(sessionId: string): Awaitable<void>;
  /** `listSessions` plus each session's mode and model strings (for the session list of a UI). */
  listSessionOverviews(): Awaitable<SessionOverview[]>;
  /** The whole session as one JSON document (see `SessionExportDocument`). */
  exportSession(sessionId: string): Awaitable<SessionExport>;
  /**
   * Validates an exported document and stores it as a new session, all or nothing; returns its id
   * (the document's own unless `session_id` is given). An existing id → SessionExistsError.
   */
  importSession(document: unknown, options?: ImportSessionOptions): Awaitable<string>;

  // Scale: keyset pages and bulk reads, so no answer grows with everything ever recorded.

  /**
   * One page of the session list, newest first (`updated_at`, then `id`), filtered; every filter
   * is answered from an indexed column. `listSessions` keeps the seed's whole-list shape.
   */
  listSessionPage(query: SessionQuery): Awaitable<SessionPage>;
  /**
   * A page of experiments (latest `last_created_at` first, then id) with their session counts and
   * first/last creation and last update, from one grouped query; `experiment` narrows it to one.
   */
  listExperimentSummaries(query?: ExperimentListQuery): Awaitable<Page<ExperimentListItem>>;
  /** A session's model and tool calls in recording order, a page at a time. */
  listUsageCalls(sessionId: string, page: PageRequest): Awaitable<Page<UsageCallRecord>>;
  /**
   * One of the session's calls by its metric key, without reading the others; null when it has
   * none. An unknown session → SessionNotFoundError.
   */
  findUsageCall(sessionId: string, metricKey: string): Awaitable<UsageCallRecord | null>;
  /** A session's turns in order, a page at a time. */
  listTurnPage(sessionId: string, page: PageRequest): Awaitable<Page<TurnRecord>>;
  /** A session's messages in order, a page at a time. */
  listMessagePage(sessionId: string, page: PageRequest): Awaitable<Page<MessageRecord>>;
  /** A session's audit rows in order, a page at a time. */
  listAuditPage(sessionId: string, page: PageRequest): Awaitable<Page<AuditRecord>>;
  /**
   * Everything the experiment's report reads (its sessions, their turns, messages and calls), in
   * a fixed number of bulk queries however many runs it has; with a page limit, a slice of its
   * sessions (oldest first) with all their rows, so a report's memory stays bounded.
   */
  experimentRecords(
    experimentId: string,
    page?: ExperimentRecordsPage,
  ): Awaitable<ExperimentRecords>;
  /**
   * The same slices as `experimentRecords`, holding only what scoring reads (see
   * ExperimentScoringRows): what an experiment's report is built from.
   */
  experimentScoringRows(
    experimentId: string,
    page?: ExperimentRecordsPage,
  ): Awaitable<ExperimentScoringRows>;
  /** A round's message groups, usage, audit and payloads in one transaction (see the options). */
  appendRecords(sessionId: string, records: AppendRecordsOptions): Awaitable<AppendRecordsResult>;

  /** False for a store that keeps nothing once closed (an in-memory database). */
  readonly persistent: boolean;
  close(): Awaitable<void>;
}
