import { isWellFormedJson } from "../domain/json-limits.js";
import type { ChatMessage } from "../domain/messages.js";
import type { LabSessionConfig } from "../domain/session-config.js";
import type { ExpectedSession, SessionStore } from "../store/session-store.js";

/** How many sessions' histories a store keeps in memory at most (least recently used go first). */
const MAX_SESSIONS = 32;

interface Kept {
  /** The turn that ended with this history. */
  turn_index: number;
  /**
   * The session's `updated_at` once that turn was stored: any later write moves it. (A turn's
   * middle rounds leave it, `touch_session: false`, but only the runner holding that turn's claim
   * writes them, and the claim moved it and took the next turn index.)
   */
  updated_at: string;
  /**
   * The session's `incarnation` as the turn read it: an import over the session (delete, then
   * the document written) keeps the document's `updated_at`, which may be the very one kept.
   */
  incarnation: number | null;
  history: ChatMessage[];
  /** The session's stored config (immutable for an incarnation: no write changes a config). */
  config: LabSessionConfig;
}

const kept = new WeakMap<SessionStore, Map<string, Kept>>();

/**
 * The history a turn of this process left, when nothing has been written to the session since:
 * the next turn then reads only its own user message instead of the whole session (whose cost
 * grows with every turn, tool calls parsed row by row). Valid only when the claimed turn is the
 * very next one, none was interrupted, and the session's `updated_at` and `incarnation` are the
 * ones that turn left: the claim checked them (the turn claimed with `keptSession`'s `expected`),
 * and they are compared here too, so a turn that read the session itself gets the history only
 * when they match. Anything else (another process's turn, a repair, an import, a write by hand)
 * reads the session from the store as before. Taken once: a failed turn leaves nothing.
 */
export function takeHistory(
  store: SessionStore,
  sessionId: string,
  check: {
    turn_index: number;
    interrupted: readonly number[];
    updated_at: string | null;
    incarnation: number | null;
  },
): ChatMessage[] | null {
  const sessions = kept.get(store);
  const entry = sessions?.get(sessionId);
  if (entry === undefined) return null;
  sessions?.delete(sessionId);
  const fresh =
    entry.turn_index + 1 === check.turn_index &&
    check.interrupted.length === 0 &&
    entry.updated_at === check.updated_at &&
    entry.incarnation !== null &&
    entry.incarnation === check.incarnation;
  return fresh ? entry.history : null;
}

/**
 * The session as this process's last turn of it left it, when kept: its config, and the
 * `updated_at` and `incarnation` a claim can expect (`ClaimTurnOptions.expected`), so that the
 * next turn need not read the session before it claims. The claim refuses when anything was
 * written since; the turn then forgets the entry (`forgetHistory`) and reads the session.
 */
export function keptSession(store: SessionStore, sessionId: string): KeptSession | null {
  const entry = kept.get(store)?.get(sessionId);
  if (entry === undefined || entry.incarnation === null) return null;
  const { config, updated_at, incarnation } = entry;
  return { config, expected: { updated_at, incarnation } };
}

/** A session as this process's last turn of it left it (keptSession). */
export interface KeptSession {
  config: LabSessionConfig;
  expected: ExpectedSession;
}

/** Drops what a session's last turn left here (a claim found the session changed since). */
export function forgetHistory(store: SessionStore, sessionId: string): void {
  kept.get(store)?.delete(sessionId);
}

/**
 * Keeps a completed turn's history for the session's next turn (see takeHistory); `added` is what
 * this turn appended to it (the rest was checked when it was kept, or read from the store).
 */
export function keepHistory(
  store: SessionStore,
  sessionId: string,
  entry: Kept,
  added: readonly ChatMessage[],
): void {
  // A text the store repairs on write (a lone surrogate) would be read back other than it is here.
  if (!added.every(isWellFormedJson)) return;
  let sessions = kept.get(store);
  if (sessions === undefined) {
    sessions = new Map();
    kept.set(store, sessions);
  }
  sessions.delete(sessionId);
  sessions.set(sessionId, entry);
  for (const oldest of sessions.keys()) {
    if (sessions.size <= MAX_SESSIONS) break;
    sessions.delete(oldest);
  }
}
