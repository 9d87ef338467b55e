import { LabSessionConfig, type LabSessionConfigInput } from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";
import type { SessionStore } from "../store/session-store.js";

export interface OpenSessionOptions {
  store: SessionStore;
  message: string;
  session_id?: string;
  title?: string;
  config?: LabSessionConfigInput;
}

/**
 * The session a turn runs in: an existing one keeps its stored config (a requested config may only
 * confirm its mode, which is locked), a new one is created with the requested config or defaults.
 */
export async function openSession(
  options: OpenSessionOptions,
): Promise<{ sessionId: string; config: LabSessionConfig }> {
  const { store } = options;
  const requested =
    options.config === undefined
      ? undefined
      : parseInput(LabSessionConfig, options.config, "config");
  if (options.session_id !== undefined) {
    const existing = await store.getSession(options.session_id);
    if (existing) {
      if (requested) {
        await store.ensureSession(options.session_id, { title: existing.title, config: requested });
      }
      return {
        sessionId: existing.id,
        config: parseInput(LabSessionConfig, existing.config, `session ${existing.id} config`),
      };
    }
  }
  const config = requested ?? LabSessionConfig.parse({});
  const sessionId = await store.createSession({
    title: options.title ?? titleFrom(options.message),
    config,
    ...(options.session_id !== undefined ? { session_id: options.session_id } : {}),
  });
  return { sessionId, config };
}

function titleFrom(message: string): string {
  const line = message.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
