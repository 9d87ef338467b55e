/** The lab's HTTP API, same origin. Errors carry the server's code and message. */

import { reportUnauthorized } from "./access.js";
import type {
  ApiErrorBody,
  AuditResponse,
  CallPayloadRecord,
  CellRunsResponse,
  EndpointCheckRequest,
  EndpointCheckResult,
  ExperimentListResponse,
  ExperimentReportResponse,
  HealthResponse,
  MessagesResponse,
  NewSessionConfig,
  PageParams,
  ScenarioListResponse,
  ScenarioRunsResponse,
  SessionDetailResponse,
  SessionListResponse,
  SessionResponse,
  StartExperimentRequest,
  StartExperimentResponse,
  SuiteListResponse,
  ToolListing,
  TurnEvent,
  TurnsResponse,
  UpstreamListing,
  UsageCallsResponse,
  UsageRollupsResponse,
} from "./api-types.js";
import { type ExperimentEvent, parseExperimentEvent } from "./experiment-progress.js";
import type { SessionFilters } from "./session-list-query.js";
import { parseTurnEvent, readSse, type SseMessage } from "./sse.js";
import { withQuery } from "./url-query.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A message for any failure, the API's own when it sent one. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  if (value === null || typeof value !== "object") return false;
  const error = (value as { error?: unknown }).error;
  return (
    error !== null &&
    typeof error === "object" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}

/** The error for a failed answer; a 401 also switches the app to its "needs a token" page. */
async function failure(response: Response): Promise<ApiError> {
  if (response.status === 401) reportUnauthorized();
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's page, an empty body): the status says enough.
  }
  if (isErrorBody(body)) {
    return new ApiError(response.status, String(body.error.code ?? "error"), body.error.message);
  }
  const text = response.statusText || "request failed";
  return new ApiError(response.status, "http_error", `HTTP ${response.status}: ${text}`);
}

/**
 * `fetch`, whose refusal to reach the server at all (a TypeError: "Failed to fetch" in Chromium,
 * "NetworkError…" in Firefox) says what happened in the lab's words. An abort stays an abort.
 */
async function fetchLab(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new ApiError(
      0,
      "unreachable",
      "the lab server did not answer: it may have stopped (start it again, then retry) or the connection dropped",
    );
  }
}

/** An event stream's messages; one that breaks off (the server stopped) says so likewise. */
async function* labEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal) {
  try {
    yield* readSse(body, signal);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new ApiError(
      0,
      "unreachable",
      "the lab server's stream broke off: it may have stopped (start it again, then retry) or the connection dropped",
    );
  }
}

/** Same origin: the browser sends the token cookie the server set (see access.ts). */
export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set("Accept", "application/json");
  if (init.body !== undefined) headers.set("Content-Type", "application/json");
  const response = await fetchLab(path, { ...init, headers });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const sessionPath = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;

const pageQuery = (page: PageParams = {}) => ({ limit: page.limit, cursor: page.cursor });
const experimentPath = (id: string) => `/api/experiments/${encodeURIComponent(id)}`;

export const api = {
  health: (signal?: AbortSignal) => request<HealthResponse>("/api/health", withSignal(signal)),
  tools: (signal?: AbortSignal) =>
    request<{ tools: ToolListing[] }>("/api/tools", withSignal(signal)),
  upstreams: (signal?: AbortSignal) =>
    request<{ upstreams: UpstreamListing[] }>("/api/upstreams", withSignal(signal)),
  checkEndpoint: (body: EndpointCheckRequest, signal?: AbortSignal) =>
    request<EndpointCheckResult>("/api/endpoints/check", {
      method: "POST",
      body: JSON.stringify(body),
      ...withSignal(signal),
    }),
  /** One page of sessions, newest first, filtered. */
  listSessions: (query: SessionFilters & PageParams = {}, signal?: AbortSignal) =>
    request<SessionListResponse>(withQuery("/api/sessions", { ...query }), withSignal(signal)),
  createSession: (title: string, config: NewSessionConfig) =>
    request<SessionResponse>("/api/sessions", {
      method: "POST",
      body: JSON.stringify({ title, config }),
    }),
  getSession: (id: string, signal?: AbortSignal) =>
    request<SessionDetailResponse>(sessionPath(id), withSignal(signal)),
  deleteSession: (id: string) => request<void>(sessionPath(id), { method: "DELETE" }),
  messages: (id: string, page?: PageParams, signal?: AbortSignal) =>
    request<MessagesResponse>(
      withQuery(`${sessionPath(id)}/messages`, pageQuery(page)),
      withSignal(signal),
    ),
  audit: (id: string, page?: PageParams, signal?: AbortSignal) =>
    request<AuditResponse>(
      withQuery(`${sessionPath(id)}/audit`, pageQuery(page)),
      withSignal(signal),
    ),
  turns: (id: string, page?: PageParams, signal?: AbortSignal) =>
    request<TurnsResponse>(
      withQuery(`${sessionPath(id)}/turns`, pageQuery(page)),
      withSignal(signal),
    ),
  /** The session's and each turn's roll-up; the calls themselves come from `usageCalls`. */
  usage: (id: string, signal?: AbortSignal) =>
    request<UsageRollupsResponse>(`${sessionPath(id)}/usage`, withSignal(signal)),
  /** A page of the session's calls, in recording order. */
  usageCalls: (id: string, page?: PageParams, signal?: AbortSignal) =>
    request<UsageCallsResponse>(
      withQuery(`${sessionPath(id)}/usage/calls`, pageQuery(page)),
      withSignal(signal),
    ),
  /** A model call's captured request and raw stream; 404 `call_not_captured` when none was kept. */
  callPayload: (id: string, metricKey: string, signal?: AbortSignal) =>
    request<CallPayloadRecord>(
      `${sessionPath(id)}/calls/${encodeURIComponent(metricKey)}`,
      withSignal(signal),
    ),
  exportSession: (id: string) => request<unknown>(`${sessionPath(id)}/export`),
  /** Sends an exported document back; the text is passed through as the server validates it. */
  /** Stores an exported session, under `sessionId` when given (else the document's own id). */
  importSession: (documentText: string, sessionId?: string) =>
    request<Partial<SessionResponse>>(
      withQuery("/api/import", sessionId === undefined ? {} : { session_id: sessionId }),
      { method: "POST", body: documentText },
    ),
  /** Answers a call waiting for approval (decided_by user); edited arguments only with approve. */
  decideApproval: (
    id: string,
    callId: string,
    body: { decision: "approve" | "deny"; arguments?: Record<string, unknown>; reason?: string },
  ) =>
    request<{ call_id: string; decision: string }>(
      `${sessionPath(id)}/approvals/${encodeURIComponent(callId)}`,
      { method: "POST", body: JSON.stringify(body) },
    ),
  listExperiments: (page?: PageParams, signal?: AbortSignal, experiment?: string) =>
    request<ExperimentListResponse>(
      withQuery("/api/experiments", {
        ...pageQuery(page),
        ...(experiment !== undefined ? { experiment } : {}),
      }),
      withSignal(signal),
    ),
  getExperiment: (id: string, signal?: AbortSignal) =>
    // The page reads only the cells: at 50,000 runs the runs are tens of MB of JSON.
    request<ExperimentReportResponse>(`${experimentPath(id)}?runs=false`, withSignal(signal)),
  /** A page of a cell's runs; `failed_first` orders the whole cell so, not just the page. */
  cellRuns: (
    id: string,
    cell: string,
    page?: PageParams & { order?: "run" | "failed_first" },
    signal?: AbortSignal,
  ) =>
    request<CellRunsResponse>(
      withQuery(`${experimentPath(id)}/cells/${encodeURIComponent(cell)}/sessions`, {
        ...pageQuery(page),
        order: page?.order,
      }),
      withSignal(signal),
    ),
  /** Every scenario the experiment has a run of. */
  scenarios: (id: string, signal?: AbortSignal) =>
    request<ScenarioListResponse>(`${experimentPath(id)}/scenarios`, withSignal(signal)),
  /** One scenario's runs in every cell, side by side. */
  scenarioRuns: (id: string, scenario: string, signal?: AbortSignal) =>
    request<ScenarioRunsResponse>(
      `${experimentPath(id)}/scenarios/${encodeURIComponent(scenario)}`,
      withSignal(signal),
    ),
  /** The suites this server can start. */
  suites: (signal?: AbortSignal) => request<SuiteListResponse>("/api/suites", withSignal(signal)),
  /** Starts (or resumes) a suite's experiment; its progress comes from `experimentEvents`. */
  startExperiment: (body: StartExperimentRequest) =>
    request<StartExperimentResponse>("/api/experiments", {
      method: "POST",
      body: JSON.stringify(body),
    }),
  /** The server takes POSTs as JSON only (a cross-site form cannot send that): an empty object. */
  cancelExperiment: (id: string) =>
    request<unknown>(`${experimentPath(id)}/cancel`, { method: "POST", body: "{}" }),
};

function withSignal(signal: AbortSignal | undefined): RequestInit {
  return signal ? { signal } : {};
}

/**
 * POSTs `body` to `path` and reports each SSE message of the answer as it streams. Resolves when
 * the stream ends; rejects with an ApiError when the server refuses (a JSON error before any
 * event), or an AbortError when `signal` stops it.
 */
export async function postSse(
  path: string,
  body: unknown,
  onMessage: (message: SseMessage) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await fetchLab(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await failure(response);
  if (!response.body) throw new ApiError(response.status, "no_stream", "the server sent no stream");
  for await (const sse of labEvents(response.body, signal)) onMessage(sse);
  signal.throwIfAborted();
}

/**
 * Starts a turn and reports its events as they stream. Resolves when the stream ends; rejects with
 * an ApiError when the server refuses the turn (409 while another runs), or an AbortError when
 * `signal` stops it.
 */
export async function streamTurn(
  sessionId: string,
  message: string,
  onEvent: (event: TurnEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  await postSse(
    `${sessionPath(sessionId)}/turns`,
    { message },
    (sse) => {
      const event = parseTurnEvent(sse);
      if (event) onEvent(event);
    },
    signal,
  );
}

/**
 * Follows a running experiment: its current progress first, then each change, until `done`,
 * `cancelled` or `error` (or `idle` when nothing runs under that id). Resolves when the stream
 * ends; rejects with an ApiError when refused, or an AbortError when `signal` stops it.
 */
export async function streamExperimentEvents(
  id: string,
  onEvent: (event: ExperimentEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await fetchLab(`${experimentPath(id)}/events`, {
    headers: { Accept: "text/event-stream" },
    signal,
  });
  if (!response.ok) throw await failure(response);
  if (!response.body) throw new ApiError(response.status, "no_stream", "the server sent no stream");
  for await (const sse of labEvents(response.body, signal)) {
    const event = parseExperimentEvent(sse);
    if (event) onEvent(event);
  }
  signal.throwIfAborted();
}
