import type { ContentfulStatusCode } from "hono/utils/http-status";
import { AgentLabError, type ErrorCode } from "../domain/errors.js";

/** Refusals only the HTTP face has; like every lab error, each carries a literal `code`. */

export class ForbiddenError extends AgentLabError {
  readonly code = "forbidden" as const;
}

export class UnauthorizedError extends AgentLabError {
  readonly code = "unauthorized" as const;
  constructor() {
    super(
      "this server needs its access token: open the address `agent-lab serve` printed (it ends in ?token=…), or send the header Authorization: Bearer <token>",
    );
  }
}

export class UnsupportedMediaTypeError extends AgentLabError {
  readonly code = "unsupported_media_type" as const;
  constructor(received: string | undefined) {
    super(
      `the request body must be JSON (Content-Type: application/json), not ${received ? JSON.stringify(received) : "an untyped body"}`,
    );
  }
}

export class PayloadTooLargeError extends AgentLabError {
  readonly code = "payload_too_large" as const;
  constructor(readonly limitBytes: number) {
    super(`the request body is larger than ${limitBytes} bytes`);
  }
}

export class RouteNotFoundError extends AgentLabError {
  readonly code = "not_found" as const;
  constructor(method: string, path: string) {
    super(`no such API route: ${method} ${path}`);
  }
}

/** A server asked to listen beyond this machine without a token (--no-token off loopback). */
export class TokenRequiredError extends AgentLabError {
  readonly code = "token_required" as const;
  constructor(host: string) {
    super(
      `refusing to listen on ${host} without a token: anyone who can reach that address could read every session and spend your API keys. --no-token is for 127.0.0.1 only; drop it (a token is then made for you), pass --token or set AGENT_LAB_TOKEN.`,
    );
  }
}

/** The address cannot be listened on (port in use, not an address of this machine). */
export class ServerListenError extends AgentLabError {
  readonly code = "listen_failed" as const;
}

/**
 * The one place a lab error code becomes an HTTP status; typed by the code union, so a new code
 * without a status does not compile. 500: the server is at fault, or the code never answers a
 * request of this API (the gateway answers provider failures in OpenAI's own shape).
 */
const STATUS_BY_CODE: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  session_not_found: 404,
  turn_not_found: 404,
  approval_not_found: 404,
  call_not_captured: 404,
  // The gateway's `model` names neither an upstream nor a lab model string.
  model_not_found: 404,
  approval_decided: 409,
  session_exists: 409,
  turn_exists: 409,
  session_mode_mismatch: 409,
  session_changed: 409,
  session_model_mismatch: 409,
  turn_in_progress: 409,
  // A retry of a turn that completed or still runs (runtime/turn-retry.ts).
  turn_not_retryable: 409,
  // Gateway tool replies that no turn waits for (it ended, or the lab restarted).
  no_waiting_turn: 409,
  experiment_running: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // The lab config's MCP server failed, not the request: a bad gateway, named in the message.
  tool_source_failed: 502,
  // The database refused (disk full, I/O error): nothing changed, the request may be retried.
  storage_failed: 503,
  // A gateway turn cancelled by the lab itself (it is stopping).
  turn_cancelled: 503,
  turn_failed: 500,
  database_open_failed: 500,
  schema_too_new: 500,
  stored_data_invalid: 500,
  provider_api_error: 500,
  provider_connection_error: 500,
  provider_stream_error: 500,
  output_limit: 500,
  token_required: 500,
  listen_failed: 500,
};

export interface ErrorBody {
  error: { code: string; message: string };
}

export const INTERNAL_ERROR_MESSAGE = "internal server error; the server's log has the details";

/**
 * The status and body for an error. Lab errors are written for people and carry no secrets, so
 * their message is sent; anything else is a bug and gets a generic 500 (never a stack).
 */
export function errorResponse(error: unknown): { status: ContentfulStatusCode; body: ErrorBody } {
  if (error instanceof AgentLabError) {
    const { code, message } = error;
    return { status: STATUS_BY_CODE[code], body: { error: { code, message } } };
  }
  return {
    status: 500,
    body: { error: { code: "internal_error", message: INTERNAL_ERROR_MESSAGE } },
  };
}
