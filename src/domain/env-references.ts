import { InvalidInputError } from "./errors.js";
import { HEADER_ENV_REFERENCE, rememberSecretValue } from "./secrets.js";

/** The process environment, or a stand-in for it (tests, a server that passes its own). */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The configured headers with their `${NAME}` references read from the environment now, at
 * request time: the config keeps the reference, never the value. Each value read is remembered
 * as a secret, so an endpoint that echoes it gets it redacted from everything the lab keeps.
 */
export function resolveHeaders(
  headers: Readonly<Record<string, string>>,
  env: Environment,
  where = "headers",
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const reference = HEADER_ENV_REFERENCE.exec(value);
    if (reference === null) {
      resolved[name] = value;
      continue;
    }
    const [, scheme, variable = ""] = reference;
    const secret = env[variable]?.trim();
    if (!secret) {
      throw new InvalidInputError(
        `${where}.${name}: the environment variable ${variable} is not set`,
      );
    }
    rememberSecretValue(secret);
    resolved[name] = scheme ? `${scheme} ${secret}` : secret;
  }
  return resolved;
}
