/**
 * The config changes a fork or a replay asks for, as the JSON merge patch (RFC 7396) the server
 * applies over the source session's config: only what changes, `null` to remove a setting.
 */
import type { ConfigOverrides } from "./derived-api.js";

export interface ConfigChanges {
  /** "" keeps the source's. */
  mode: string;
  chat_model: string;
  /** null keeps the source's prompt; "" goes back to the mode's default. */
  system_prompt: string | null;
}

export const NO_CHANGES: ConfigChanges = { mode: "", chat_model: "", system_prompt: null };

const isSim = (model: unknown) => typeof model === "string" && /^sim(:|$)/.test(model);

export function configOverrides(
  source: Record<string, unknown>,
  changes: ConfigChanges,
): ConfigOverrides | undefined {
  const overrides: ConfigOverrides = {};
  const mode = changes.mode.trim();
  if (mode !== "" && mode !== source.tool_invocation_mode) overrides.tool_invocation_mode = mode;
  const chat = (source.chat_agent ?? {}) as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  const model = changes.chat_model.trim();
  if (model !== "" && model !== chat.model) {
    patch.model = model;
    // A sim's options (first_token_ms…) mean nothing to another provider, and back.
    if (chat.options !== undefined && isSim(model) !== isSim(chat.model)) patch.options = null;
  }
  if (changes.system_prompt !== null && changes.system_prompt !== (chat.system_prompt ?? "")) {
    patch.system_prompt = changes.system_prompt.trim() === "" ? null : changes.system_prompt;
  }
  if (Object.keys(patch).length > 0) overrides.chat_agent = patch;
  return Object.keys(overrides).length === 0 ? undefined : overrides;
}
