import { ProviderApiError, ProviderConnectionError } from "../errors.js";
import { noKeySentHint } from "./api-key-requirement.js";
import {
  askedRetryDelayMs,
  connectionRetryLimit,
  isRetryableResponse,
  REFUSED_RETRY_DELAY_MS,
  shouldRetryVerdict,
} from "./retry-policy.js";
import type { AttemptOutcome } from "./send-attempt.js";

/**
 * A failed attempt as the adapter acts on it: how many retries it may have, what the `retry` part
 * says, and the error the call ends with. Every message names the base URL, and a likely cause the
 * user can fix is said with it (a missing `/v1`, a key that was never sent).
 */

export interface FailureDescription {
  /** The retries this failure allows (the adapter also counts headers timeouts). */
  retry_limit: number;
  /** The longest wait before that retry (a refused connection's is short). */
  max_delay_ms: number;
  status: number | null;
  reason: string;
  error: ProviderApiError | ProviderConnectionError;
}

export interface FailureContext {
  attempts: number;
  max_retries: number;
  base_url: string;
  /** The variable the key comes from, and whether one was sent. */
  api_key_env: string;
  key_sent: boolean;
}

export function describeFailure(
  outcome: Exclude<AttemptOutcome, { kind: "response" }>,
  context: FailureContext,
): FailureDescription {
  const { attempts, max_retries, base_url } = context;
  if (outcome.kind === "http-error") {
    const retryable = isRetryableResponse(outcome.status, outcome.headers);
    return {
      retry_limit: retryable ? max_retries : 0,
      max_delay_ms: Number.POSITIVE_INFINITY,
      status: outcome.status,
      reason: `status ${outcome.status}${outcome.endpoint_message ? `: ${outcome.endpoint_message}` : ""}`,
      error: new ProviderApiError({
        status: outcome.status,
        endpointMessage: outcome.endpoint_message,
        requestId: outcome.request_id,
        retryable,
        attempts,
        base_url,
        hint: statusHint(outcome.status, context),
        retryAfterMs: askedRetryDelayMs(outcome.headers),
        shouldRetry: shouldRetryVerdict(outcome.headers),
        endpointParam: outcome.endpoint_fields.param,
        endpointCode: outcome.endpoint_fields.code,
      }),
    };
  }
  return {
    // Nothing reached the model, or nothing came back: trying again is safe, when it can help.
    retry_limit: connectionRetryLimit(outcome.failure, max_retries),
    max_delay_ms: outcome.failure === "refused" ? REFUSED_RETRY_DELAY_MS : Number.POSITIVE_INFINITY,
    status: null,
    reason: outcome.message,
    error: new ProviderConnectionError(
      `${outcome.message}${attempts > 1 ? ` (after ${attempts} attempts)` : ""}`,
      attempts,
      { cause: outcome.cause, headers_timeout: outcome.headers_timeout },
    ),
  };
}

function statusHint(status: number, context: FailureContext): string | undefined {
  if (status === 404 && !hasVersionSegment(context.base_url)) {
    return "is `/v1` missing from the base URL?";
  }
  if ((status === 401 || status === 403) && !context.key_sent) {
    return noKeySentHint(context.api_key_env);
  }
  return undefined;
}

/** `/v1`, `/api/v1`, `/v1beta/openai`: a path with a version in it is probably the right one. */
export function hasVersionSegment(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).pathname.split("/").some((segment) => /^v\d+/i.test(segment));
  } catch {
    return false;
  }
}
