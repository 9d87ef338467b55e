import { isLoopbackUrl } from "../../domain/loopback-url.js";

/**
 * When an endpoint cannot work without a key, so that a missing one is said before any request
 * ("`OPENAI_API_KEY` is not set; the endpoint at URL needs a key") instead of after a 401 or three
 * network attempts. The rule (README, "Models"):
 * - an endpoint on this machine (a local llama.cpp, Ollama, vLLM) never needs one: none is sent;
 * - OpenAI's own endpoint always does;
 * - any other endpoint does when its config names `api_key_env`: naming the variable says a key is
 *   expected. Without it the default OPENAI_API_KEY is sent when set, and nothing when not (a LAN
 *   server without auth); a 401 then says no key was sent and why.
 */

/**
 * The variable a config names for an endpoint that takes no key: never set, never needed. The
 * gateway names it for an upstream without `api_key_env`, so the lab's OPENAI_API_KEY is not sent
 * to whatever endpoint that upstream is.
 */
export const NO_KEY_ENV = "AGENT_LAB_GATEWAY_NO_KEY";

const OPENAI_HOST = "api.openai.com";

/** `named`: the config names `api_key_env` itself (not the OPENAI_API_KEY default). */
export function isKeyNeeded(baseUrl: string, variable: string, named: boolean): boolean {
  if (isLoopbackUrl(baseUrl) || variable === NO_KEY_ENV) return false;
  return named || isOpenAIHosted(baseUrl);
}

export function missingKeyMessage(variable: string, baseUrl: string): string {
  return `\`${variable}\` is not set; the endpoint at ${baseUrl} needs a key`;
}

/** What a 401/403 adds when the request carried no key: the likely reason, named. */
export function noKeySentHint(variable: string): string {
  return variable === NO_KEY_ENV
    ? "no key was sent: the config names no api_key_env"
    : `no key was sent: \`${variable}\` is not set`;
}

function isOpenAIHosted(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname.toLowerCase() === OPENAI_HOST;
  } catch {
    return false;
  }
}
