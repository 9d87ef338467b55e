import { AgentLabError } from "../domain/errors.js";

/**
 * Provider failures, by kind. Messages carry what a user needs (status, the endpoint's own
 * message, a request id) and never the API key, request bodies or raw response payloads.
 */

export interface ProviderApiFailure {
  status: number;
  /** The endpoint's own message, from its error body; null when it sent none worth quoting. */
  endpointMessage: string | null;
  requestId: string | null;
  retryable: boolean;
  attempts: number;
  /** The configured base URL, named in the message. */
  base_url?: string | undefined;
  /** A likely cause the user can fix ("is `/v1` missing from the base URL?"). */
  hint?: string | undefined;
  /** The wait the endpoint asked for before another try (`retry-after-ms`, `retry-after`). */
  retryAfterMs?: number | null | undefined;
  /** The endpoint's own `x-should-retry` verdict; null when it gave none. */
  shouldRetry?: boolean | null | undefined;
  /** The error body's `param` (the field refused) and `code`, when it names them. */
  endpointParam?: string | null | undefined;
  endpointCode?: string | null | undefined;
}

export class ProviderApiError extends AgentLabError {
  readonly code = "provider_api_error" as const;
  readonly status: number;
  readonly endpointMessage: string | null;
  readonly requestId: string | null;
  readonly retryable: boolean;
  readonly attempts: number;
  /** What the endpoint said about trying again, for a gateway to hand on to its client. */
  readonly retryAfterMs: number | null;
  readonly shouldRetry: boolean | null;
  readonly endpointParam: string | null;
  readonly endpointCode: string | null;
  constructor(failure: ProviderApiFailure) {
    const { status, endpointMessage, requestId, attempts, base_url, hint } = failure;
    super(
      `model endpoint${base_url ? ` ${base_url}` : ""} answered ${status}` +
        `${endpointMessage ? `: ${endpointMessage}` : ""}` +
        `${requestId ? ` (request id ${requestId})` : ""}` +
        `${attempts > 1 ? ` after ${attempts} attempts` : ""}` +
        `${hint ? `; ${hint}` : ""}`,
    );
    this.status = status;
    this.endpointMessage = endpointMessage;
    this.requestId = requestId;
    this.retryable = failure.retryable;
    this.attempts = attempts;
    this.retryAfterMs = failure.retryAfterMs ?? null;
    this.shouldRetry = failure.shouldRetry ?? null;
    this.endpointParam = failure.endpointParam ?? null;
    this.endpointCode = failure.endpointCode ?? null;
  }
}

export class ProviderConnectionError extends AgentLabError {
  readonly code = "provider_connection_error" as const;
  /** The endpoint took the request and sent no response headers in time (a stall, not a refusal). */
  readonly headers_timeout: boolean;
  constructor(
    message: string,
    readonly attempts: number,
    options?: ErrorOptions & { headers_timeout?: boolean },
  ) {
    super(message, options);
    this.headers_timeout = options?.headers_timeout ?? false;
  }
}

export type StreamFailure =
  | "no_finish_reason"
  | "error_event"
  | "malformed_json"
  | "idle_timeout"
  | "deadline_exceeded"
  | "connection_lost";

export class ProviderStreamError extends AgentLabError {
  readonly code = "provider_stream_error" as const;
  constructor(
    readonly failure: StreamFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
