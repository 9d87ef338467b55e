import { InvalidInputError, SessionNotFoundError } from "../domain/errors.js";
import type { SessionRecord } from "../domain/records.js";
import type { SessionStore } from "../store/session-store.js";
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
export async function resolveSession(
  store: SessionStore,
  idOrPrefix: string,
  hint = "agent-lab sessions lists them",
): Promise<SessionRecord> {
  const exact = await store.getSession(idOrPrefix);
  if (exact !== null) return exact;
  const found = await findByPrefix(store, idOrPrefix);
  if (found !== null) return found;
  throw new UnknownSessionError(idOrPrefix, hint);
}

/** Like resolveSession, but null for an id that names no session (ambiguity still throws). */
export async function findSession(
  store: SessionStore,
  idOrPrefix: string,
): Promise<SessionRecord | null> {
  return (await store.getSession(idOrPrefix)) ?? findByPrefix(store, idOrPrefix);
}

async function findByPrefix(store: SessionStore, prefix: string): Promise<SessionRecord | null> {
  if (prefix.length < MIN_PREFIX_LENGTH) return null;
  const ids = await store.findSessionIdsByPrefix(prefix, LISTED_CANDIDATES + 1);
  if (ids.length === 0) return null;
  if (ids.length > 1) {
    // One line, as every CLI error is: the ids, each with its title.
    const shown: string[] = [];
    for (const id of ids.slice(0, LISTED_CANDIDATES)) {
      const session = await store.getSession(id);
      shown.push(
        `${terminalSafe(id)}${session === null ? "" : ` "${terminalSafe(session.title)}"`}`,
      );
    }
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
