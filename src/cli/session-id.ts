import { InvalidInputError, SessionNotFoundError } from "../domain/errors.js";
import type { SessionRecord } from "../domain/records.js";
import type { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { terminalSafe } from "./output.js";

/** As in git: a shorter prefix matches too many ids to be worth guessing from. */
export const MIN_PREFIX_LENGTH = 4;
/** How many candidates an ambiguous prefix lists. */
const LISTED_CANDIDATES = 10;

/**
 * The session a command names: its exact id, else the one session whose id starts with it (at
 * least MIN_PREFIX_LENGTH characters), as `git` takes a commit. An ambiguous prefix is refused with
 * the candidates; an unknown id says how to list the sessions (and, for `run`/`chat`, `hint` says
 * how to create one).
 */
export function resolveSession(
  store: SqliteSessionStore,
  idOrPrefix: string,
  hint = "agent-lab sessions lists them",
): SessionRecord {
  const exact = store.getSession(idOrPrefix);
  if (exact !== null) return exact;
  const found = findByPrefix(store, idOrPrefix);
  if (found !== null) return found;
  throw new UnknownSessionError(idOrPrefix, hint);
}

/** Like resolveSession, but null for an id that names no session (ambiguity still throws). */
export function findSession(store: SqliteSessionStore, idOrPrefix: string): SessionRecord | null {
  return store.getSession(idOrPrefix) ?? findByPrefix(store, idOrPrefix);
}

function findByPrefix(store: SqliteSessionStore, prefix: string): SessionRecord | null {
  if (prefix.length < MIN_PREFIX_LENGTH) return null;
  const ids = store.findSessionIdsByPrefix(prefix, LISTED_CANDIDATES + 1);
  if (ids.length === 0) return null;
  if (ids.length > 1) {
    // One line, as every CLI error is: the ids, each with its title.
    const shown = ids.slice(0, LISTED_CANDIDATES).map((id) => {
      const session = store.getSession(id);
      return `${terminalSafe(id)}${session === null ? "" : ` "${terminalSafe(session.title)}"`}`;
    });
    const more = ids.length > LISTED_CANDIDATES ? ", …" : "";
    throw new InvalidInputError(
      `session id prefix ${terminalSafe(prefix)} is ambiguous: it starts ${shown.join(", ")}${more}; give more of the id`,
    );
  }
  return store.getSession(ids[0] as string);
}

/** session_not_found, with what to do next. */
class UnknownSessionError extends SessionNotFoundError {
  constructor(sessionId: string, hint: string) {
    super(sessionId);
    this.message = `session not found: ${terminalSafe(sessionId)} (no id is or starts with it; ${hint})`;
  }
}
