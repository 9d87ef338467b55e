import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import {
  AgentLabError,
  InvalidInputError,
  MissingApiKeyError,
  TurnInProgressError,
} from "../../domain/errors.js";
import { redactSecretText } from "../../domain/secrets.js";
import {
  ProviderApiError,
  ProviderConnectionError,
  ProviderStreamError,
} from "../../providers/errors.js";
import { errorResponse } from "../http-errors.js";
import { GatewayModelNotFoundError } from "./upstream-resolution.js";

/**
 * Errors as OpenAI's API writes them, for `/v1`: the clients the gateway serves (openai-node, the
 * AI SDK, LangChain) read `error.message` and pick an error class by status, so a refusal reads
 * the same as one from OpenAI. Every message is redacted here, whoever built it: an upstream's
 * message may echo a key.
 */

export interface OpenAIErrorDetail {
  message: string;
  /** `invalid_request_error`, `server_error`, … (OpenAI's `type`). */
  type: string;
  /** The request field at fault (`messages.0.role`), or null. */
  param: string | null;
  /** A machine-readable code (`invalid_api_key`, `model_not_found`), or null. */
  code: string | null;
}

export interface OpenAIErrorBody {
  error: OpenAIErrorDetail;
}

/** A status and the body to send with it. */
export interface OpenAIError {
  status: ContentfulStatusCode;
  body: OpenAIErrorBody;
  /** Headers beside it: the upstream's word on trying again (see retryHeaders). */
  headers?: Readonly<Record<string, string>>;
}

export const INVALID_REQUEST = "invalid_request_error";
export const SERVER_ERROR = "server_error";

export function openAIError(
  status: ContentfulStatusCode,
  message: string,
  options: { type?: string; param?: string | null; code?: string | null } = {},
): OpenAIError {
  return {
    status,
    body: {
      error: {
        message: redactSecretText(message),
        type: options.type ?? (status >= 500 ? SERVER_ERROR : INVALID_REQUEST),
        param: options.param ?? null,
        code: options.code ?? null,
      },
    },
  };
}

/** 400 naming every offending field (`messages.0.role: …`); `param` is the first one. */
export function invalidRequestError(issues: z.ZodError | string, where?: string): OpenAIError {
  if (typeof issues === "string") return openAIError(400, issues);
  const described = issues.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const first = issues.issues[0]?.path.map(String).join(".");
  const text = described.join("; ");
  return openAIError(400, where ? `${where}: ${text}` : text, { param: first || null });
}

export const INVALID_API_KEY_MESSAGE =
  "this gateway needs the lab's access token: give it as the client's API key (Authorization: Bearer <token>), or in the header X-Agent-Lab-Token when the API key is an upstream's own (pass_client_key)";

/** 401 as OpenAI sends it for a missing or wrong key: the clients' AuthenticationError. */
export function invalidApiKeyError(message = INVALID_API_KEY_MESSAGE): OpenAIError {
  return openAIError(401, message, { code: "invalid_api_key" });
}

/** 404 for a `model` the gateway cannot serve, listing what it can. */
export function modelNotFoundError(model: string, available: readonly string[]): OpenAIError {
  return openAIError(
    404,
    `The model ${JSON.stringify(model)} does not exist on this gateway; use one of: ${available.join(", ")}`,
    { param: "model", code: "model_not_found" },
  );
}

/**
 * The model the request names needs a key the lab's environment does not hold: the server's
 * setup, not the request, so not a 400 (which clients read as "fix your request"), and nothing a
 * retry changes until someone sets the variable and restarts the lab. openai-node reads
 * `x-should-retry` and does not retry; the AI SDK retries every 5xx whatever it says, after 2 s
 * and 4 s, so the user waited 6 s for a setup error: `retry-after-ms: 0` makes those retries
 * immediate (each refused at once, nothing recorded).
 */
export function missingKeyError(message: string): OpenAIError {
  return {
    ...openAIError(500, message, { code: "missing_api_key" }),
    headers: { "x-should-retry": "false", "retry-after-ms": "0" },
  };
}

/** 409: the session named by the request already has a turn running. */
export function turnRunningError(message: string): OpenAIError {
  return openAIError(409, message, { code: "turn_in_progress" });
}

/**
 * What the upstream said about trying again, for the client: the gateway makes one attempt per
 * call (upstream-resolution.ts), so the client's backoff is the one that waits, and it should
 * wait as long as the upstream asked. openai-node and the AI SDK read these headers.
 */
function retryHeaders(error: ProviderApiError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfterMs !== null) {
    headers["retry-after-ms"] = String(Math.round(error.retryAfterMs));
    headers["retry-after"] = String(Math.ceil(error.retryAfterMs / 1000));
  }
  if (error.shouldRetry !== null) headers["x-should-retry"] = String(error.shouldRetry);
  return headers;
}

/** The upstream's status names a real condition the client knows how to treat (retry on 429). */
const PASSED_UPSTREAM_STATUSES = new Set([400, 401, 403, 404, 408, 409, 413, 422, 429]);

/**
 * A failed upstream call as the client sees it. An HTTP error keeps the upstream's status (a 429
 * stays retryable for the client's own backoff, a 500 stays a 500) and its message, redacted; a
 * connection failure is 502 naming the URL, a stall 504.
 */
export function upstreamError(
  error: ProviderApiError | ProviderConnectionError | ProviderStreamError,
  upstream: string | null = null,
): OpenAIError {
  const who = upstream === null ? "the model endpoint" : `upstream ${upstream}`;
  if (error instanceof ProviderApiError) {
    const status =
      error.status >= 500 && error.status <= 599
        ? (error.status as ContentfulStatusCode)
        : PASSED_UPSTREAM_STATUSES.has(error.status)
          ? (error.status as ContentfulStatusCode)
          : 502;
    const type =
      error.status === 429 ? "rate_limit_error" : status >= 500 ? SERVER_ERROR : INVALID_REQUEST;
    return {
      ...openAIError(status, `${who} failed: ${error.message}`, {
        type,
        // The upstream's own words on which field it refused and why, when it gave them.
        param: error.endpointParam,
        code:
          error.endpointCode ?? (error.status === 429 ? "rate_limit_exceeded" : "upstream_error"),
      }),
      headers: retryHeaders(error),
    };
  }
  if (error instanceof ProviderConnectionError) {
    // The adapter's message names the endpoint's base URL. An endpoint that took the request and
    // never answered stalled, as one that stops mid-answer does: a gateway timeout, not a 502.
    if (error.headers_timeout) {
      return openAIError(504, `${who} did not answer: ${error.message}`, {
        code: "upstream_timeout",
      });
    }
    return openAIError(502, `${who} could not be reached: ${error.message}`, {
      code: "upstream_unreachable",
    });
  }
  const stalled = error.failure === "idle_timeout" || error.failure === "deadline_exceeded";
  return openAIError(stalled ? 504 : 502, `${who} failed mid-answer: ${error.message}`, {
    code: stalled ? "upstream_timeout" : "upstream_stream_error",
  });
}

/** Lab error codes that have an OpenAI counterpart; the rest keep the lab's own code. */
const OPENAI_CODE_BY_LAB_CODE: Readonly<Record<string, string | null>> = {
  invalid_input: null,
  unauthorized: "invalid_api_key",
  not_found: null,
  model_not_found: "model_not_found",
};

/** A failure of the upstream, answered as such: the lab's own code did nothing wrong. */
export function isUpstreamFailure(
  error: unknown,
): error is ProviderApiError | ProviderConnectionError | ProviderStreamError {
  return (
    error instanceof ProviderApiError ||
    error instanceof ProviderConnectionError ||
    error instanceof ProviderStreamError
  );
}

/**
 * Any error as OpenAI would write it. Provider failures keep the upstream's status; lab errors the
 * status the API gives them (http-errors.ts) and their message; anything else is a generic 500
 * with nothing of the error in it (it may be a bug, and its text was never checked for secrets).
 */
export function toOpenAIError(error: unknown, upstream: string | null = null): OpenAIError {
  if (isUpstreamFailure(error)) return upstreamError(error, upstream);
  if (error instanceof z.ZodError) return invalidRequestError(error);
  if (error instanceof TurnInProgressError) return turnRunningError(error.message);
  if (error instanceof MissingApiKeyError) return missingKeyError(error.message);
  if (error instanceof InvalidInputError) return openAIError(400, error.message);
  if (error instanceof GatewayModelNotFoundError) {
    return modelNotFoundError(error.model, error.available);
  }
  const { status, body } = errorResponse(error);
  if (error instanceof AgentLabError && status === 401) return invalidApiKeyError(error.message);
  return fromLabErrorBody(status, body);
}

/**
 * The lab's own error body (`{ error: { code, message } }`, what `/api` sends) in OpenAI's shape,
 * for the answers the lab's shared handlers made to a `/v1` request (404 of an unknown route,
 * 413, 500).
 */
export function fromLabErrorBody(
  status: ContentfulStatusCode,
  body: { error: { code: string; message: string } },
): OpenAIError {
  const { code, message } = body.error;
  if (status === 401) return invalidApiKeyError();
  const mapped = Object.hasOwn(OPENAI_CODE_BY_LAB_CODE, code)
    ? (OPENAI_CODE_BY_LAB_CODE[code] ?? null)
    : code;
  const error = openAIError(status, message, { code: mapped });
  return FINAL_REFUSALS.has(code) ? { ...error, headers: { "x-should-retry": "false" } } : error;
}

/**
 * Refusals no retry of the same request can change (the session's mode or model differs, no turn
 * waits for these replies), answered 409, which openai-node retries twice by default: the
 * header tells it not to (the AI SDK does not retry a 409).
 */
const FINAL_REFUSALS = new Set([
  "session_mode_mismatch",
  "session_model_mismatch",
  "no_waiting_turn",
]);

/** A lab-shaped error body, as read back from a response (never trusted as more than that). */
export const LabErrorBody = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string() }),
});

/** The JSON response for an error (content type and `no-store` as OpenAI's). */
export function openAIErrorResponse(error: OpenAIError): Response {
  return new Response(JSON.stringify(error.body), {
    status: error.status,
    headers: {
      ...error.headers,
      "content-type": "application/json",
      "cache-control": "no-store",
    },
  });
}

/**
 * The error as an event of a stream that has already started (headers sent, status 200): OpenAI
 * sends `data: {"error": {...}}` and openai-node throws it as an APIError. No `[DONE]` follows;
 * the stream ends.
 */
export function openAIErrorEvent(error: OpenAIError): string {
  return `data: ${JSON.stringify(error.body)}\n\n`;
}
