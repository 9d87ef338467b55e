import { isDeepStrictEqual } from "node:util";
import { SessionNotFoundError } from "../domain/errors.js";
import { sliceWhole } from "../domain/json-limits.js";
import { LabSessionConfig, type LabSessionConfigInput } from "../domain/session-config.js";
import type { ExpectedSession, SessionStore, StoredSessionConfig } from "../store/session-store.js";
import { parseSessionConfig, parseStoredSessionConfig, type StoredConfig } from "./config-cache.js";
import type { KeptSession } from "./history-cache.js";

export interface OpenSessionOptions {
  store: SessionStore;
  message: string;
  session_id?: string;
  title?: string;
  config?: LabSessionConfigInput;
}

export interface OpenedSession<Prepared> {
  sessionId: string;
  config: LabSessionConfig;
  /** What `prepare` built from `config`. */
  prepared: Prepared;
  /**
   * The stored session's `updated_at` as read here before the turn claims it, or as kept (see
   * `expected`); null for a session this turn made.
   */
  updated_at: string | null;
  /** The stored session's `incarnation`, read (or kept) with `updated_at`, or after making it. */
  incarnation: number | null;
  /**
   * Set when the session was not read but taken as this process's last turn left it (`kept`):
   * the claim must expect it so (`ClaimTurnOptions.expected`).
   */
  expected?: ExpectedSession;
}

/**
 * The session a turn runs in: an existing one keeps its stored config (a requested config may only
 * confirm its mode, which is locked), a new one is created with the requested config or defaults.
 *
 * `prepare` builds what the turn needs from the config (models, tools) and throws when it cannot.
 * It runs before a new session is written: a config naming an unknown tool or a bad model string
 * must not leave a stored session whose every later turn would fail the same way.
 */
export async function openSession<Prepared>(
  options: OpenSessionOptions,
  prepare: (config: LabSessionConfig) => Promise<Prepared>,
  /**
   * The session as this process's last turn of it left it (`keptSession`), taken instead of a
   * read unless the turn asks for another mode. The turn's claim must then expect it, and a turn
   * whose attempt on it fails for any reason tries again with nothing kept (run-turn.ts).
   */
  kept: KeptSession | null = null,
): Promise<OpenedSession<Prepared>> {
  const { store } = options;
  const requested =
    options.config === undefined ? undefined : parseSessionConfig(options.config, "config");
  // Only a new session needs a title: an existing one's turns do not compute it.
  const title = () => options.title ?? titleFrom(options.message);
  if (options.session_id !== undefined) {
    const sessionId = options.session_id;
    // This process's last turn of the session left its config: not read again, but expected by
    // the claim, which refuses if anything was written since (one read a turn fewer). A turn
    // asking for another mode reads the session, as before, for ensureSession's refusal.
    const taken =
      kept !== null &&
      (!requested || requested.tool_invocation_mode === kept.config.tool_invocation_mode)
        ? kept
        : null;
    const existing =
      taken === null
        ? await storedSessionConfig(store, sessionId)
        : { config: taken.config, mode: taken.config.tool_invocation_mode, ...taken.expected };
    if (existing) {
      // The mode is locked: another one is refused (by ensureSession, which names both); the
      // same one needs no write, so a turn that repeats its config costs no transaction for it.
      if (requested && requested.tool_invocation_mode !== existing.mode) {
        const title = (await store.getSession(sessionId))?.title ?? "";
        await store.ensureSession(sessionId, { title, config: requested });
      }
      const prepared = await prepare(existing.config);
      const { updated_at, incarnation } = existing;
      const opened = { sessionId, config: existing.config, prepared, updated_at, incarnation };
      return taken === null ? opened : { ...opened, expected: taken.expected };
    }
    const config = requested ?? LabSessionConfig.parse({});
    const prepared = await prepare(config);
    // Two turns may start the same new session at once and both see it missing: ensureSession
    // creates it or, when the other turn just did, only checks the mode, leaving the refusal to
    // the turn lock. The stored config is then the one used.
    await store.ensureSession(sessionId, { title: title(), config });
    // One read: the stored config (the other turn's, perhaps) and the row's incarnation.
    const stored = await storedSessionConfig(store, sessionId);
    if (stored === null) throw new SessionNotFoundError(sessionId);
    const { incarnation } = stored;
    return isDeepStrictEqual(stored.config, config)
      ? { sessionId, config, prepared, updated_at: null, incarnation }
      : {
          sessionId,
          config: stored.config,
          prepared: await prepare(stored.config),
          updated_at: null,
          incarnation,
        };
  }
  const config = requested ?? LabSessionConfig.parse({});
  const prepared = await prepare(config);
  const sessionId = await store.createSession({ title: title(), config });
  const incarnation = await incarnationOf(store, sessionId);
  return { sessionId, config, prepared, updated_at: null, incarnation };
}

/** The incarnation of a session just made: its next turn may then take the history this one keeps. */
async function incarnationOf(store: SessionStore, sessionId: string): Promise<number | null> {
  return (await store.getStoredSessionConfig(sessionId))?.incarnation ?? null;
}

/**
 * A stored session's config and mode (null: no such session), read as the stored text and parsed
 * once per text (`parseStoredSessionConfig`), with the `updated_at` and `incarnation` read with
 * it. A text the cache cannot take is read through the whole record, whose read refuses it by
 * name.
 */
export async function storedSessionConfig(
  store: SessionStore,
  sessionId: string,
): Promise<(StoredConfig & Omit<StoredSessionConfig, "config_json">) | null> {
  const head = await store.getStoredSessionConfig(sessionId);
  if (head === null) return null;
  const where = `session ${sessionId} config`;
  const parsed = parseStoredSessionConfig(head.config_json, where);
  const { updated_at, incarnation } = head;
  if (parsed !== null) return { ...parsed, updated_at, incarnation };
  const record = await store.getSession(sessionId);
  if (record === null) throw new SessionNotFoundError(sessionId);
  return {
    config: parseSessionConfig(record.config, where),
    mode: record.tool_invocation_mode,
    updated_at: record.updated_at,
    incarnation,
  };
}

function titleFrom(message: string): string {
  const line = message.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${sliceWhole(line, 57)}...` : line;
}
