import { z } from "zod";
import type { Environment } from "../../domain/env-references.js";
import { InvalidInputError, MissingApiKeyError } from "../../domain/errors.js";
import { describeTooDeep, findTooDeep, MAX_CONFIG_DEPTH } from "../../domain/json-limits.js";
import { KeyVariable } from "../../domain/key-variable.js";
import { findCredentialProblems, rememberSecretValue } from "../../domain/secrets.js";
import { parseInput } from "../../domain/validation.js";
import { isKeyNeeded, missingKeyMessage } from "./api-key-requirement.js";
import type { BackoffSettings } from "./retry-policy.js";

/**
 * Configuration of an OpenAI-compatible endpoint. It may be stored with a session, so it holds no
 * secret: the key is read from the environment variable it names (`api_key_env`), and a config
 * that carries a key itself is refused.
 */

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";

const milliseconds = z.number().int().positive();

export const SendReasoning = z.union([
  z.literal(false),
  z.enum(["reasoning_content", "reasoning"]),
]);
export type SendReasoning = z.infer<typeof SendReasoning>;

export const OpenAIConfig = z.strictObject({
  /** The model name the endpoint knows, without the lab's `openai:` prefix. */
  model: z.string().trim().min(1),
  /** Defaults to $OPENAI_BASE_URL, else OpenAI's own endpoint. */
  base_url: z.string().optional(),
  /** The *name* of the environment variable holding the key; default OPENAI_API_KEY. */
  api_key_env: KeyVariable.optional(),
  /**
   * Extra request headers. Values name an environment variable (`${NAME}`, `Bearer ${NAME}`),
   * resolved at each request; only identifying headers (X-Title, OpenAI-Organization, …) may be
   * literal. See findCredentialProblems.
   */
  headers: z
    .record(
      z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name"),
      z.string().regex(/^[^\r\n]*$/, "must be a single line"),
    )
    .default({}),
  max_retries: z.number().int().min(0).max(10).default(2),
  /**
   * Until the response headers arrive, per attempt. A timeout is retried once at most (whatever
   * max_retries says): an endpoint silent twice in a row is down, and a third wait adds nothing.
   */
  timeout_ms: milliseconds.default(30_000),
  /**
   * Longest wait for progress while the body streams: content, reasoning or tool-call deltas, the
   * finish reason. Keep-alive comments and empty chunks do not count.
   */
  idle_timeout_ms: milliseconds.default(60_000),
  /** The whole call, retries and backoff included: no call outlives it. */
  deadline_ms: milliseconds.default(300_000),
  /** Backoff before the first retry, before jitter; doubled each retry (openai-node: 500). */
  retry_base_delay_ms: z.number().int().nonnegative().default(500),
  retry_max_delay_ms: z.number().int().nonnegative().default(8_000),
  /**
   * Sends an assistant message's reasoning back, in this field, for endpoints that need it
   * (DeepSeek's thinking mode with tools wants `reasoning_content`). Off by default: most
   * endpoints ignore it at best, and it costs prompt tokens.
   */
  send_reasoning: SendReasoning.default(false),
});
export type OpenAIConfig = z.output<typeof OpenAIConfig>;
export type OpenAIConfigInput = z.input<typeof OpenAIConfig>;

const HttpUrl = z.url({ protocol: /^https?$/, error: "must be an http or https URL" });

export interface ResolvedOpenAIConfig {
  model: string;
  /** Without a trailing slash. */
  base_url: string;
  /** The variable the key is read from (its name only: errors may say it). */
  api_key_env: string;
  headers: Record<string, string>;
  max_retries: number;
  timeout_ms: number;
  idle_timeout_ms: number;
  deadline_ms: number;
  backoff: BackoffSettings;
  send_reasoning: SendReasoning;
}

/**
 * Validates the config and reads what it points to in the environment. Errors name the field
 * (`openai config: max_retries: ...`) and never repeat a secret value.
 */
export function resolveOpenAIConfig(
  input: unknown,
  env: Environment,
): { config: ResolvedOpenAIConfig; apiKey: string | null } {
  const tooDeep = findTooDeep(input, MAX_CONFIG_DEPTH);
  if (tooDeep !== null) {
    throw new InvalidInputError(`openai config: ${describeTooDeep(tooDeep, MAX_CONFIG_DEPTH)}`);
  }
  const problems = findCredentialProblems(input);
  if (problems.length > 0) {
    throw new InvalidInputError(
      `openai config: ${problems.map(({ path, message }) => `${path.join(".")}: ${message}`).join("; ")}`,
    );
  }
  const parsed = parseInput(OpenAIConfig, input, "openai config");

  const endpoint = resolveEndpoint(parsed, env, "openai config: ");
  const apiKey = endpoint.api_key;
  // Said now, before any request: see api-key-requirement.ts for when a key is needed.
  if (apiKey === null && endpoint.key_needed) {
    throw new MissingApiKeyError(
      missingKeyMessage(endpoint.api_key_env, endpoint.base_url),
      endpoint.api_key_env,
    );
  }
  rememberSecretValue(apiKey);

  return {
    config: {
      model: parsed.model,
      base_url: endpoint.base_url,
      api_key_env: endpoint.api_key_env,
      headers: parsed.headers,
      max_retries: parsed.max_retries,
      timeout_ms: parsed.timeout_ms,
      idle_timeout_ms: parsed.idle_timeout_ms,
      deadline_ms: parsed.deadline_ms,
      backoff: {
        base_delay_ms: parsed.retry_base_delay_ms,
        max_delay_ms: parsed.retry_max_delay_ms,
      },
      send_reasoning: parsed.send_reasoning,
    },
    apiKey,
  };
}

/** Where an endpoint is and the key it gets, as the adapter and the endpoint check see them. */
export interface ResolvedEndpoint {
  /** Without a trailing slash. */
  base_url: string;
  /** The variable the key is read from: the one named, else OPENAI_API_KEY. */
  api_key_env: string;
  /** Never logged or returned: it only goes into an Authorization header. */
  api_key: string | null;
  /** Whether the endpoint cannot work without a key (api-key-requirement.ts). */
  key_needed: boolean;
}

/**
 * The base URL (configured, else $OPENAI_BASE_URL, else OpenAI's) checked, and the key read. A
 * missing key is not an error here: the caller decides (the adapter refuses, a check reports).
 */
export function resolveEndpoint(
  selection: { base_url?: string | undefined; api_key_env?: string | undefined },
  env: Environment,
  prefix = "",
): ResolvedEndpoint {
  // An empty variable is an unset one (`OPENAI_BASE_URL= agent-lab ...`).
  const environmentBaseUrl = env.OPENAI_BASE_URL?.trim() || undefined;
  const fromEnvironment = selection.base_url === undefined && environmentBaseUrl !== undefined;
  const rawBaseUrl = selection.base_url ?? environmentBaseUrl ?? DEFAULT_BASE_URL;
  const where = `${prefix}base_url${fromEnvironment ? " (from OPENAI_BASE_URL)" : ""}`;
  const parsed = HttpUrl.safeParse(rawBaseUrl.trim());
  if (!parsed.success) throw new InvalidInputError(`${where}: must be an http or https URL`);
  const { username, password } = new URL(parsed.data);
  if (username || password) {
    // Credentials in a URL end up in logs and error messages; fetch refuses them anyway.
    throw new InvalidInputError(`${where}: must not contain credentials; use api_key_env`);
  }
  const base_url = parsed.data.replace(/\/+$/, "");
  const api_key_env = selection.api_key_env ?? DEFAULT_API_KEY_ENV;
  return {
    base_url,
    api_key_env,
    api_key: env[api_key_env]?.trim() || null,
    key_needed: isKeyNeeded(base_url, api_key_env, selection.api_key_env !== undefined),
  };
}
