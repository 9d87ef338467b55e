import { AgentLabError } from "../domain/errors.js";

/**
 * Provider failures, by kind. Messages carry what a user needs (status, the endpoint's own
 * message, a request id) and never the API key, request bodies or raw response payloads.
 */

export class ProviderApiError extends AgentLabError {
  readonly code = "provider_api_error" as const;
  constructor(
    readonly status: number,
    readonly endpointMessage: string | null,
    readonly requestId: string | null,
    readonly retryable: boolean,
    readonly attempts: number,
  ) {
    super(
      `model endpoint answered ${status}${endpointMessage ? `: ${endpointMessage}` : ""}` +
        `${requestId ? ` (request id ${requestId})` : ""}` +
        `${attempts > 1 ? ` after ${attempts} attempts` : ""}`,
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
