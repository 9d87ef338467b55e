import { redactSecretText } from "../domain/secrets.js";

/**
 * A tool result from outside the process (an MCP server, an HTTP endpoint) with every string
 * passed through the secret redactor: such a tool may echo what the lab resolved for it (an env
 * value, a header), and the kernel stores results as given. Keys are kept: a result's `token`
 * field is data, not necessarily a credential.
 */
export function redactResult(value: unknown): unknown {
  if (typeof value === "string") return redactSecretText(value);
  if (Array.isArray(value)) return value.map(redactResult);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [key, redactResult(child)]),
  );
}
