import { type AttemptSignal, REQUEST_TIMEOUT } from "./attempt-signal.js";
import { type ConnectionFailureKind, describeConnectionFailure } from "./connection-failure.js";
import {
  type EndpointErrorFields,
  endpointErrorFields,
  endpointMessageFromBody,
  sanitizeRequestId,
} from "./endpoint-message.js";

/**
 * One HTTP attempt up to a decision: a streaming response to read, an HTTP error (with the
 * endpoint's message), or a connection failure. Retrying is the caller's business.
 */

export type AttemptOutcome =
  | { kind: "response"; response: Response; headers_at: number }
  | {
      kind: "http-error";
      status: number;
      headers: Headers;
      request_id: string | null;
      endpoint_message: string | null;
      /** The error body's `param` and `code`, when it names them. */
      endpoint_fields: EndpointErrorFields;
    }
  | {
      kind: "connection-error";
      /** Names the base URL. */
      message: string;
      cause: unknown;
      headers_timeout: boolean;
      /** What went wrong; a headers timeout is `other`. */
      failure: ConnectionFailureKind;
    };

export interface AttemptRequest {
  fetch: typeof globalThis.fetch;
  url: string;
  /** The configured base URL, which failure messages name. */
  base_url: string;
  headers: Record<string, string>;
  body: string;
  signal: AttemptSignal;
  timeout_ms: number;
  api_key: string | null;
}

/** Error bodies are short; a larger one is a proxy page we would not quote anyway. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export async function sendAttempt(request: AttemptRequest): Promise<AttemptOutcome> {
  const { signal } = request;
  // The request timeout covers the wait for headers and, on an error status, for its short body.
  const clearTimer = signal.startTimer(request.timeout_ms, REQUEST_TIMEOUT);
  try {
    let response: Response;
    try {
      response = await request.fetch(request.url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        signal: signal.signal,
      });
    } catch (error) {
      signal.throwIfUserAborted();
      if (signal.reason === REQUEST_TIMEOUT) {
        return {
          kind: "connection-error",
          message: `no response headers within ${request.timeout_ms} ms from ${request.base_url}`,
          cause: error,
          headers_timeout: true,
          failure: "other",
        };
      }
      const failure = describeConnectionFailure(error, request.base_url, request.api_key);
      return {
        kind: "connection-error",
        message: failure.message,
        cause: error,
        headers_timeout: false,
        failure: failure.kind,
      };
    }
    const headers_at = performance.now();
    if (response.ok) return { kind: "response", response, headers_at };

    const text = await readErrorText(response);
    signal.throwIfUserAborted();
    return {
      kind: "http-error",
      status: response.status,
      headers: response.headers,
      request_id: sanitizeRequestId(response.headers.get("x-request-id"), request.api_key),
      endpoint_message: text === null ? null : endpointMessageFromBody(text, request.api_key),
      endpoint_fields: text === null ? { param: null, code: null } : endpointErrorFields(text),
    };
  } finally {
    clearTimer();
  }
}

/** The error body as text, or null if it could not be read; never longer than the cap. */
async function readErrorText(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_ERROR_BODY_BYTES) return null;
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } catch {
    // A timeout or a dropped connection while reading an error body: the status still counts.
    return text.length > 0 ? text : null;
  } finally {
    reader.cancel().catch(() => {});
  }
}
