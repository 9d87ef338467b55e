import { isDeepStrictEqual } from "node:util";
import { SessionNotFoundError } from "../domain/errors.js";
import { LabSessionConfig, type LabSessionConfigInput } from "../domain/session-config.js";
import type { SessionStore } from "../store/session-store.js";
import { parseSessionConfig } from "./config-cache.js";
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
  /** The stored session's `updated_at` as read here, before the turn claims it (null: new). */
  updated_at: string | null;
  /** The stored session's `created_at` (null: created here). */
  created_at: string | null;
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
  /** What this process's last turn of the session read (keptSession): checked, not trusted. */
  known: KeptSession | null = null,
): Promise<OpenedSession<Prepared>> {
  const { store } = options;
  const requested =
    options.config === undefined ? undefined : parseSessionConfig(options.config, "config");
  // Only a new session needs a title: an existing one's turns do not compute it.
  const title = () => options.title ?? titleFrom(options.message);
  if (options.session_id !== undefined) {
    const sessionId = options.session_id;
    const stamp = known === null ? null : await store.getSessionStamp(sessionId);
    const unchanged =
      known !== null &&
      stamp?.created_at === known.created_at &&
      stamp.updated_at === known.updated_at;
    const existing = unchanged
      ? { id: sessionId, ...known, tool_invocation_mode: known.config.tool_invocation_mode }
      : await store.getSession(sessionId);
    if (existing) {
      // The mode is locked: another one is refused (by ensureSession, which names both); the
      // same one needs no write, so a turn that repeats its config costs no transaction for it.
      if (requested && requested.tool_invocation_mode !== existing.tool_invocation_mode) {
        const stored = "title" in existing ? existing : await store.getSession(sessionId);
        await store.ensureSession(sessionId, { title: stored?.title ?? "", config: requested });
      }
      const config = unchanged
        ? known.config
        : parseSessionConfig(existing.config, `session ${existing.id} config`);
      const prepared = await prepare(config);
      const { updated_at, created_at } = existing;
      return { sessionId: existing.id, config, prepared, updated_at, created_at };
    }
    const config = requested ?? LabSessionConfig.parse({});
    const prepared = await prepare(config);
    // Two turns may start the same new session at once and both see it missing: ensureSession
    // creates it or, when the other turn just did, only checks the mode, leaving the refusal to
    // the turn lock. The stored config is then the one used.
    await store.ensureSession(options.session_id, { title: title(), config });
    const stored = await store.getSession(options.session_id);
    if (stored === null) throw new SessionNotFoundError(options.session_id);
    const storedConfig = parseSessionConfig(stored.config, `session ${stored.id} config`);
    return isDeepStrictEqual(storedConfig, config)
      ? { sessionId: stored.id, config, prepared, updated_at: null, created_at: null }
      : {
          sessionId: stored.id,
          config: storedConfig,
          prepared: await prepare(storedConfig),
          updated_at: null,
          created_at: null,
        };
  }
  const config = requested ?? LabSessionConfig.parse({});
  const prepared = await prepare(config);
  const sessionId = await store.createSession({ title: title(), config });
  return { sessionId, config, prepared, updated_at: null, created_at: null };
}

function titleFrom(message: string): string {
  const line = message.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
