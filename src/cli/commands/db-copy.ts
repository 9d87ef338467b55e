import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { isDatabaseAway } from "../../domain/database-away.js";
import {
  AgentLabError,
  InvalidInputError,
  SessionExistsError,
  StorageError,
} from "../../domain/errors.js";
import type { SessionExport } from "../../domain/session-export.js";
import {
  isPostgresUrl,
  redactDatabaseUrl,
  refuseUriName,
  scrubDatabaseSecrets,
} from "../../store/database-url.js";
import { labExists, openExistingSessionStore, openSessionStore } from "../../store/open-store.js";
import type { SessionStore } from "../../store/session-store.js";

/**
 * `agent-lab db copy`: every session of one lab into another (SQLite file or PostgreSQL URL, any
 * direction), one session at a time through the stores' own export and import, so each lands
 * whole or not at all and is checked the same way on both backends. A copy run again copies only
 * what is missing; a session the target holds with other content is left alone and reported.
 */

export interface CopyTotals {
  sessions: number;
  turns: number;
  messages: number;
  audit: number;
  usage_rows: number;
  payloads: number;
  total_tokens: number;
  /** Reported and estimated cost of every call, summed (USD). */
  cost_usd: number;
}

export interface CopyConflict {
  session_id: string;
  difference: string;
}

export interface CopyOutcome {
  /** Sessions the source holds. */
  listed: number;
  copied: number;
  /** Already in the target with the same records (an earlier copy). */
  present: number;
  conflicts: CopyConflict[];
  /** Stopped by the signal before every session was looked at. */
  stopped: boolean;
  /** Of the copied and present sessions: as the source holds them, and as the target does. */
  source: CopyTotals;
  target: CopyTotals;
}

export interface CopyOptions {
  from: string;
  to: string;
  dry_run: boolean;
  /** Progress lines (stderr). */
  progress: (line: string) => void;
  /** How often a progress line is written (default 2 s; 0: after every session). */
  progress_every_ms?: number;
  /** Stops the copy between two sessions (each is copied whole or not at all). */
  signal?: AbortSignal;
}

const emptyTotals = (): CopyTotals => ({
  sessions: 0,
  turns: 0,
  messages: 0,
  audit: 0,
  usage_rows: 0,
  payloads: 0,
  total_tokens: 0,
  cost_usd: 0,
});

function addDocument(totals: CopyTotals, document: SessionExport, payloads: number): void {
  totals.sessions += 1;
  totals.turns += document.turns.length;
  totals.messages += document.messages.length;
  totals.audit += document.audit.length;
  totals.usage_rows += document.usage.calls.length;
  totals.payloads += payloads;
  for (const call of document.usage.calls) {
    totals.total_tokens += call.total_tokens;
    totals.cost_usd += (call.cost_usd ?? 0) + (call.cost_estimated_usd ?? 0);
  }
}

/**
 * The source's document as the target should hold it: a turn running in the source arrives
 * interrupted (importedTurns), so where the target holds that turn interrupted, the source's is
 * read as interrupted at the target's time (the time it was marked is the copy's, not the
 * source's); any other field of that turn must still agree.
 */
function asCopied(source: SessionExport, target: SessionExport): SessionExport {
  const held = new Map(target.turns.map((turn) => [turn.turn_index, turn]));
  return {
    ...source,
    turns: source.turns.map((turn) => {
      const there = held.get(turn.turn_index);
      return turn.status === "running" && there?.status === "interrupted"
        ? { ...turn, status: "interrupted", completed_at: there.completed_at }
        : turn;
    }),
  };
}

/** Whether the target's document says what the source's does (see asCopied and comparable). */
function agrees(source: SessionExport, target: SessionExport): boolean {
  return comparable(asCopied(source, target)) === comparable(target);
}

/**
 * A document as both stores must agree on it: without when it was exported and without the row
 * ids, which each database numbers itself (an import renumbers them); keys sorted.
 */
function comparable(document: SessionExport): string {
  const { exported_at: _, ...rest } = document;
  const withoutId = <T extends { id: number }>(rows: T[]) => rows.map(({ id: __, ...row }) => row);
  return canonicalJson({
    ...rest,
    messages: withoutId(document.messages),
    audit: withoutId(document.audit),
    usage: { ...document.usage, calls: withoutId(document.usage.calls) },
  });
}

/**
 * U+0000, which PostgreSQL text cannot hold, is stored there as U+FFFD (a model may stream a
 * `\u0000`): the two are the same character for the comparison, either way round, or a session
 * holding one could never be copied to PostgreSQL, nor found the same there on the next run.
 */
const sameText = (text: string) => text.replaceAll("\u0000", "\uFFFD");

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "string") return sameText(item);
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>)
        .map(([key, child]) => [sameText(key), child] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  });
}

/** The first way two documents of one session differ, in words. */
function differenceOf(source: SessionExport, target: SessionExport): string {
  const counts: [string, number, number][] = [
    ["turns", source.turns.length, target.turns.length],
    ["messages", source.messages.length, target.messages.length],
    ["audit rows", source.audit.length, target.audit.length],
    ["usage rows", source.usage.calls.length, target.usage.calls.length],
  ];
  for (const [what, here, there] of counts) {
    if (here !== there) return `${what}: ${here} in the source, ${there} in the target`;
  }
  const copied = asCopied(source, target);
  for (const [index, turn] of copied.turns.entries()) {
    const there = target.turns[index];
    if (there !== undefined && there.status !== turn.status) {
      return `turn ${turn.turn_index}: ${turn.status} in the source, ${there.status} in the target`;
    }
  }
  if (source.session.updated_at !== target.session.updated_at) {
    return `updated ${source.session.updated_at} in the source, ${target.session.updated_at} in the target`;
  }
  return "the same counts but other content";
}

/**
 * The payloads of the session's calls, copied when the target lacks them: how many the source
 * holds, and how many the target holds with the same bodies (read back, not assumed).
 */
async function copyPayloads(
  source: SessionStore,
  target: SessionStore | null,
  document: SessionExport,
): Promise<{ source: number; target: number }> {
  const counts = { source: 0, target: 0 };
  const sessionId = document.session.id;
  for (const call of document.usage.calls) {
    if (call.metric_key === null) continue;
    const payload = await source.getCallPayload(sessionId, call.metric_key);
    if (payload === null) continue;
    counts.source += 1;
    if (target === null) continue;
    // Idempotent by metric key: a payload an earlier run copied is kept, not written twice.
    await target.appendCallPayload(sessionId, {
      metric_key: payload.metric_key,
      turn_index: payload.turn_index,
      round_index: payload.round_index,
      agent: payload.agent,
      request_body: payload.request_body,
      response_body: payload.response_body,
      request_bytes: payload.request_bytes,
      response_bytes: payload.response_bytes,
      request_truncated: payload.request_truncated,
      response_truncated: payload.response_truncated,
    });
    const copied = await target.getCallPayload(sessionId, call.metric_key);
    if (
      copied !== null &&
      copied.request_body === payload.request_body &&
      copied.response_body === payload.response_body
    ) {
      counts.target += 1;
    }
  }
  return counts;
}

/**
 * What a copy can read or write: a SQLite file or a PostgreSQL URL. An in-memory database would
 * take the copy and keep nothing; another scheme is refused by refuseUriName (it would be read
 * as a file path and reported missing, which says nothing of the mistake).
 */
function checkDatabaseName(flag: string, name: string): void {
  refuseUriName(flag, name);
  if (name.trim() === ":memory:") {
    throw new InvalidInputError(
      `${flag}: an in-memory database keeps nothing once the copy ends: name a SQLite file or a postgres:// URL`,
    );
  }
}

/** The same database named twice (a path two ways, or one URL): refused before anything opens. */
function sameDatabase(from: string, to: string): boolean {
  if (isPostgresUrl(from) !== isPostgresUrl(to)) return false;
  return isPostgresUrl(from) ? from.trim() === to.trim() : resolve(from) === resolve(to);
}

async function openSource(from: string): Promise<SessionStore> {
  const label = redactDatabaseUrl(from);
  if (!isPostgresUrl(from) && !existsSync(from)) {
    throw new InvalidInputError(`--from: no such database file: ${label}`);
  }
  const store = await opened("--from", from, () => openExistingSessionStore(from));
  if (store === null) {
    throw new InvalidInputError(`--from: ${label} holds no agent-lab tables: nothing to copy`);
  }
  return store;
}

async function opened<T>(flag: string, target: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const label = redactDatabaseUrl(target);
    // DatabaseOpenError and the SQLite store's open error already name the database.
    const text = /^cannot open/i.test(reason)
      ? scrubDatabaseSecrets(reason, target)
      : `cannot open the database ${label}: ${scrubDatabaseSecrets(reason, target)}`;
    throw new InvalidInputError(`${flag}: ${text}`);
  }
}

export async function copyDatabase(options: CopyOptions): Promise<CopyOutcome> {
  const { from, to } = options;
  checkDatabaseName("--from", from);
  checkDatabaseName("--to", to);
  if (sameDatabase(from, to)) {
    throw new InvalidInputError(
      `--from and --to name the same database (${redactDatabaseUrl(from)}): nothing to copy`,
    );
  }
  const source = await openSource(from);
  try {
    // A dry run creates nothing: a target that is not there yet is an empty lab.
    const target = options.dry_run
      ? await opened("--to", to, async () =>
          (await labExists(to)) ? openExistingSessionStore(to) : null,
        )
      : await opened("--to", to, () =>
          openSessionStore(to, { application_name: "agent-lab db copy" }),
        );
    try {
      return await copySessions(
        sided("--from", from, source),
        target === null ? null : sided("--to", to, target),
        options,
      );
    } finally {
      await target?.close();
    }
  } finally {
    await source.close();
  }
}

/** A database failing mid-copy (a lost connection, a full disk), named by its side of the copy. */
export class CopySideError extends AgentLabError {
  readonly code = "storage_failed" as const;
  constructor(flag: string, label: string, cause: Error) {
    // A database that went away (a restart, a cut connection) leaves what was copied whole.
    const resume = isDatabaseAway(cause)
      ? "; the sessions copied so far are whole: run the same command again to copy the rest"
      : "";
    super(`${flag} (${label}): ${cause.message}${resume}`, { cause });
  }
}

/**
 * The store, its failures named by the side they happened on: both sides' errors read alike ("the
 * connection to the database was lost"), and a copy between two servers must say which one.
 */
function sided(flag: string, target: string, store: SessionStore): SessionStore {
  const label = redactDatabaseUrl(target);
  // The store's refusals, and whatever its driver threw (a read on a connection the server
  // closed is no StorageError): a lab error of another kind (a session not found) is the copy's.
  const named = (error: unknown) =>
    error instanceof StorageError || (error instanceof Error && !(error instanceof AgentLabError))
      ? new CopySideError(flag, label, error)
      : error;
  return new Proxy(store, {
    get(inner, property) {
      const value = Reflect.get(inner, property, inner);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(inner, args);
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw named(error);
              })
            : result;
        } catch (error) {
          throw named(error);
        }
      };
    },
  });
}

const PROGRESS_EVERY_MS = 2_000;

async function copySessions(
  source: SessionStore,
  target: SessionStore | null,
  options: CopyOptions,
): Promise<CopyOutcome> {
  const ids = (await source.listSessions()).map((session) => session.id);
  const outcome: CopyOutcome = {
    listed: ids.length,
    copied: 0,
    present: 0,
    conflicts: [],
    stopped: false,
    source: emptyTotals(),
    target: emptyTotals(),
  };
  let lastProgress = Date.now();
  for (const [index, sessionId] of ids.entries()) {
    // A turn of the event loop between sessions: a SQLite store answers without one, and a
    // Ctrl-C would otherwise wait for the whole copy to be heard.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (options.signal?.aborted) {
      outcome.stopped = true;
      break;
    }
    const document = await source.exportSession(sessionId);
    const existing = target === null ? null : await target.getSession(sessionId);
    /** The target's copy when it says what the source does (else a conflict, and null). */
    const alreadyThere = async (into: SessionStore): Promise<SessionExport | null> => {
      const found = await into.exportSession(sessionId);
      if (!agrees(document, found)) {
        outcome.conflicts.push({
          session_id: sessionId,
          difference: differenceOf(document, found),
        });
        return null;
      }
      outcome.present += 1;
      return found;
    };
    let stored: SessionExport | null = null;
    if (target !== null && existing !== null) {
      stored = await alreadyThere(target);
      if (stored === null) continue;
    } else if (target !== null && !options.dry_run) {
      if (await importedHere(target, document)) {
        // Read back: the verification compares what the target now holds, not what was sent.
        stored = await target.exportSession(sessionId);
        if (!agrees(document, stored)) {
          // Not left behind unverified: a session lands whole and checked, or not at all.
          await target.deleteSession(sessionId);
          throw new Error(
            `session ${sessionId} reads back from the target unlike the source (${differenceOf(document, stored)}); it was removed from the target again, and the copy stopped`,
          );
        }
        outcome.copied += 1;
      } else {
        stored = await alreadyThere(target);
        if (stored === null) continue;
      }
    } else {
      // A dry run: what would be copied.
      outcome.copied += 1;
    }
    const payloads = await copyPayloads(source, options.dry_run ? null : target, document);
    addDocument(outcome.source, document, payloads.source);
    if (stored !== null) addDocument(outcome.target, stored, payloads.target);
    if (Date.now() - lastProgress >= (options.progress_every_ms ?? PROGRESS_EVERY_MS)) {
      lastProgress = Date.now();
      options.progress(
        `db copy: ${index + 1} of ${ids.length} sessions (${outcome.copied} copied, ${outcome.present} already there, ${outcome.conflicts.length} conflicting)`,
      );
    }
  }
  return outcome;
}

/**
 * Imports the session; false when another copy into the same target imported it meanwhile (it
 * is then compared as one already there, not a failure of this copy).
 */
async function importedHere(target: SessionStore, document: SessionExport): Promise<boolean> {
  try {
    await target.importSession(document);
    return true;
  } catch (error) {
    if (error instanceof SessionExistsError) return false;
    throw error;
  }
}
