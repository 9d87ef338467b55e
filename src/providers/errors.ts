import { AgentLabError } from "../domain/errors.js";

/**
 * Provider failures, by kind. Messages carry what a user needs (status, the endpoint's own
 * message, a request id) and never the API key, request bodies or raw response payloads.
 */

/** Where a failed request went, and what the user may have got wrong, for the message. */
export interface ProviderErrorContext {
  /** The configured base URL, named in the message. */
  base_url?: string | undefined;
  /** A likely cause the user can fix ("is `/v1` missing from the base URL?"). */
  hint?: string | undefined;
}

export class ProviderApiError extends AgentLabError {
  readonly code = "provider_api_error" as const;
  constructor(
    readonly status: number,
    readonly endpointMessage: string | null,
    readonly requestId: string | null,
    readonly retryable: boolean,
    readonly attempts: number,
    context: ProviderErrorContext = {},
  ) {
    super(
      `model endpoint${context.base_url ? ` ${context.base_url}` : ""} answered ${status}` +
        `${endpointMessage ? `: ${endpointMessage}` : ""}` +
        `${requestId ? ` (request id ${requestId})` : ""}` +
        `${attempts > 1 ? ` after ${attempts} attempts` : ""}` +
        `${context.hint ? `; ${context.hint}` : ""}`,
    );
  }
}

export class ProviderConnectionError extends AgentLabError {
  readonly code = "provider_connection_error" as const;
  constructor(
    message: string,
    readonly attempts: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
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
