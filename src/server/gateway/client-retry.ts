import { redactSecretText } from "../../domain/secrets.js";
import type { ChatModelPart } from "../../providers/chat-model.js";
import { ProviderApiError, ProviderConnectionError } from "../../providers/errors.js";

/** How long a round whose call failed waits for the client's retry (openai-node's is seconds). */
export const RETRY_WAIT_MS = 2 * 60_000;

/** The record of an attempt the upstream refused, whose next attempt is the client's retry. */
export function retryPart(
  attempt: number,
  error: ProviderApiError | ProviderConnectionError,
): ChatModelPart {
  return {
    type: "retry",
    attempt,
    status: error instanceof ProviderApiError ? error.status : null,
    reason: `${redactSecretText(error.message)}; the client's retry of the request makes the next attempt`,
    delay_ms: 0,
  };
}

/** Statuses openai-node and the AI SDK retry (and a connection that failed). */
export function clientRetries(error: unknown): error is ProviderApiError | ProviderConnectionError {
  if (error instanceof ProviderConnectionError) return true;
  if (!(error instanceof ProviderApiError)) return false;
  // The upstream said not to (forwarded as x-should-retry): openai-node will not.
  if (error.shouldRetry === false) return false;
  return (
    error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500
  );
}
