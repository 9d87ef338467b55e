/**
 * The config changes a fork or a replay asks for, as overrides the server merges over the source
 * session's config. Agents are sent whole (the source's settings with the change), so the result
 * is the same whether the server merges them deeply or replaces them.
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
  const chat = { ...((source.chat_agent ?? {}) as Record<string, unknown>) };
  let chatChanged = false;
  const model = changes.chat_model.trim();
  if (model !== "" && model !== chat.model) {
    // A sim's options (first_token_ms…) mean nothing to another provider, and back.
    if (isSim(model) !== isSim(chat.model)) delete chat.options;
    chat.model = model;
    chatChanged = true;
  }
  if (changes.system_prompt !== null && changes.system_prompt !== chat.system_prompt) {
    if (changes.system_prompt.trim() === "") delete chat.system_prompt;
    else chat.system_prompt = changes.system_prompt;
    chatChanged = true;
  }
  if (chatChanged) overrides.chat_agent = chat;
  return Object.keys(overrides).length === 0 ? undefined : overrides;
}
