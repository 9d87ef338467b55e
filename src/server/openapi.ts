import { z } from "zod";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from "../domain/pagination.js";
import {
  ExportedAudit,
  ExportedCall,
  ExportedMessage,
  ExportedSession,
  ExportedTurn,
  ExportedUsage,
  SessionExportDocument,
} from "../domain/session-export.js";
import { TurnEvent } from "../domain/turn-events.js";
import { derivedSessionPaths, derivedSessionSchemas } from "./openapi-derived-sessions.js";
import {
  experimentRunPaths,
  experimentRunSchemas,
  startExperimentOperation,
} from "./openapi-experiment-runs.js";
import { type JsonObject, json, object, ok, ref } from "./openapi-shapes.js";
import { ApprovalBody } from "./routes/approvals.js";
import { EndpointCheckBody } from "./routes/endpoints.js";
import { CreateSessionBody } from "./routes/sessions.js";
import { TurnBody } from "./routes/turns.js";

/**
 * The HTTP API as an OpenAPI 3.1 document. Request bodies and the records come from the same zod
 * schemas the server and the store validate with, so they cannot drift; the routes are listed by
 * hand, and a test checks that every route of the app is here and nothing else.
 */

function schemaOf(schema: z.ZodType, io: "input" | "output"): JsonObject {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

/**
 * A record as the API sends it, from a schema whose output JSON Schema cannot say it (a transform,
 * as the export's calls have, renders as "anything"): the input schema with every property
 * required, since the server always sends every field, defaults filled in.
 */
function sentRecordOf(schema: z.ZodType): JsonObject {
  const requireAll = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(requireAll);
    if (node === null || typeof node !== "object") return node;
    const entries = Object.entries(node).map(([key, value]) => [key, requireAll(value)] as const);
    const result: JsonObject = Object.fromEntries(entries);
    const properties = result.properties;
    if (result.type === "object" && properties !== null && typeof properties === "object") {
      result.required = Object.keys(properties);
    }
    return result;
  };
  return requireAll(schemaOf(schema, "input")) as JsonObject;
}

/** TurnFacts' fields every turn has (`error`, a failed turn's reason, is not among them). */
const TURN_FACTS_REQUIRED = [
  ...["status", "answer", "rounds", "tool_calls", "ttft_ms", "wall_time_ms", "prompt_tokens"],
  ...["cached_tokens", "completion_tokens", "total_tokens", "fallback_count", "tool_count"],
];

const ERRORS = {
  400: "invalid input: the message names each offending field (code invalid_input)",
  401: "the request lacks the server's token: `Authorization: Bearer TOKEN` or the browser's cookie (unauthorized)",
  403: "a foreign Host header (DNS rebinding) or a cross-origin change (forbidden)",
  404: "unknown session (session_not_found), route (not_found), call not waiting for approval (approval_not_found) or call without a captured payload (call_not_captured)",
  409: "session_exists, session_mode_mismatch, turn_in_progress, approval_decided or experiment_running",
  413: "the body is larger than the limit (payload_too_large)",
  415: "the body is not application/json (unsupported_media_type)",
  500: "an unexpected failure, reported with a generic message (internal_error)",
  502: "an MCP server of the lab config file did not start or list its tools (tool_source_failed); the message names it",
} as const;

function errors(...statuses: (keyof typeof ERRORS)[]): JsonObject {
  const common: (keyof typeof ERRORS)[] = [401, 403, 500];
  return Object.fromEntries(
    [...new Set([...statuses, ...common])]
      .sort()
      .map((status) => [status, { description: ERRORS[status], content: json(ref("Error")) }]),
  );
}

// Keyset pages (domain/pagination.ts): every paged list takes these two and answers next_cursor.
const pageParameters = [
  {
    name: "limit",
    in: "query",
    required: false,
    description: `rows per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
    schema: { type: "integer", minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
  },
  {
    name: "cursor",
    in: "query",
    required: false,
    description:
      "the next_cursor of the previous page, unchanged (absent: the first page); a cursor of another list or session, or an edited one, is a 400",
    schema: { type: "string", maxLength: 1024 },
  },
];
const nextCursor = {
  anyOf: [{ type: "string" }, { type: "null" }],
  description: "pass as cursor for the next page; null on the last page",
};
const paged = (key: string, item: JsonObject) =>
  object({ [key]: { type: "array", items: item }, next_cursor: nextCursor });

const filter = (name: string, description: string, schema: JsonObject = { type: "string" }) => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
});
const sessionFilters = [
  filter("q", "a case-insensitive substring of the title (1 to 200 characters)"),
  filter("mode", "the tool invocation mode", { enum: ["chat_agent_tools", "dual_agent"] }),
  filter("model", "the chat or the event agent's model string, exactly"),
  filter("tag", "one of the session's config tags, exactly"),
  filter("status", "the status of the session's latest turn; none: a session without turns", {
    enum: ["running", "completed", "cancelled", "failed", "max_rounds", "interrupted", "none"],
  }),
  filter(
    "experiment",
    "the experiment id the session ran for (its runs are listed even without include=experiments)",
  ),
  filter(
    "include",
    "experiments: list the sessions experiments ran too (left out by default: the Experiments page is where they live)",
    { enum: ["experiments"] },
  ),
  filter(
    "experiments",
    "exclude (the default without include or experiment), include, or only the sessions experiments ran; not with include (400), nor exclude with experiment (400)",
    { enum: ["exclude", "include", "only"] },
  ),
  filter(
    "updated_from",
    "updated at or after: an ISO 8601 time with offset, or a date (YYYY-MM-DD, from its UTC midnight)",
  ),
  filter(
    "updated_to",
    "updated at or before: an ISO 8601 time with offset, or a date (YYYY-MM-DD, its whole UTC day)",
  ),
];

const sessionId = {
  name: "id",
  in: "path",
  required: true,
  description: "the session id",
  schema: { type: "string" },
};

function components(): JsonObject {
  return {
    securitySchemes: {
      bearer: {
        type: "http",
        scheme: "bearer",
        description:
          "Every /api request, unless the server was started with --no-token (loopback only). The token is the one `serve` printed or $AGENT_LAB_TOKEN; a browser that opened a page with ?token=TOKEN sends the cookie agent_lab_token_PORT instead.",
      },
    },
    schemas: {
      ToolListing: object({
        name: { type: "string" },
        source: { enum: ["builtin", "declared", "http", "mcp"] },
        description: { type: "string" },
        parameters: { type: "object", description: "the JSON Schema of the arguments" },
        requires_approval: { type: "boolean" },
      }),
      Error: object({ error: object({ code: { type: "string" }, message: { type: "string" } }) }),
      SessionOverview: object({
        id: { type: "string" },
        title: { type: "string" },
        created_at: { type: "string" },
        updated_at: { type: "string" },
        turn_count: { type: "integer" },
        total_tokens: { type: "integer" },
        tool_invocation_mode: { enum: ["chat_agent_tools", "dual_agent"] },
        chat_model: { type: "string" },
        event_model: { type: "string" },
      }),
      SessionPageItem: {
        allOf: [
          ref("SessionOverview"),
          object({
            tags: { type: "array", items: { type: "string" } },
            experiment_id: { anyOf: [{ type: "string" }, { type: "null" }] },
            last_status: {
              anyOf: [schemaOf(ExportedTurn.shape.status, "output"), { type: "null" }],
              description: "the latest turn's status; null for a session without turns",
            },
          }),
        ],
      },
      Session: schemaOf(ExportedSession, "output"),
      Turn: schemaOf(ExportedTurn, "output"),
      Message: schemaOf(ExportedMessage, "output"),
      AuditEntry: schemaOf(ExportedAudit, "output"),
      UsageRollups: sentRecordOf(ExportedUsage.omit({ calls: true })),
      UsageCall: sentRecordOf(ExportedCall),
      // What import accepts (version-1 documents lack the newer fields); export writes all of them.
      SessionExport: schemaOf(SessionExportDocument, "input"),
      CreateSessionBody: schemaOf(CreateSessionBody, "input"),
      EndpointCheckBody: schemaOf(EndpointCheckBody, "input"),
      TurnBody: schemaOf(TurnBody, "input"),
      ApprovalBody: schemaOf(ApprovalBody, "input"),
      CallPayload: object({
        session_id: { type: "string" },
        metric_key: {
          type: "string",
          description: "the metric key of the call's usage row (chat:T:R, fallback:T:R:E)",
        },
        turn_index: { type: "integer" },
        round_index: { type: "integer" },
        agent: { enum: ["chat_agent", "event_agent", "event_kernel"] },
        request_body: {
          type: "string",
          description:
            "the JSON text of the request body as sent (messages, tools, parameters; headers and keys are never captured), up to the session's capture.max_bytes",
        },
        response_body: {
          type: "string",
          description: "the raw stream as received (SSE text), decoded as UTF-8, up to the cap",
        },
        request_bytes: { type: "integer", description: "the full size before any cut" },
        response_bytes: { type: "integer", description: "the full size before any cut" },
        request_truncated: { type: "boolean" },
        response_truncated: { type: "boolean" },
        stored_bytes: { type: "integer", description: "both bodies, compressed, in storage" },
        created_at: { type: "string" },
      }),
      PendingApproval: object({
        call_id: { type: "string" },
        session_id: { type: "string" },
        turn_index: { type: "integer" },
        round_index: { type: "integer" },
        event_name: { type: "string" },
        arguments: { type: "object" },
        requested_at: { type: "string", format: "date-time" },
      }),
      // The runtime's own schema (src/domain/turn-events.ts): one variant per SSE event name.
      TurnEvent: {
        type: "object",
        ...schemaOf(TurnEvent, "output"),
        discriminator: { propertyName: "type" },
      },
      ...experimentSchemas(),
      ...experimentRunSchemas(),
      ...derivedSessionSchemas(),
    },
  };
}

function paths(): JsonObject {
  return {
    "/api/health": {
      get: {
        operationId: "health",
        summary: "Liveness and the server's version",
        responses: {
          200: ok("running", object({ ok: { const: true }, version: { type: "string" } })),
          ...errors(),
        },
      },
    },
    "/api/openapi.json": {
      get: {
        operationId: "openapi",
        summary: "This document",
        responses: { 200: ok("the OpenAPI document", { type: "object" }), ...errors() },
      },
    },
    "/api/tools": {
      get: {
        operationId: "listTools",
        summary: "Every tool the lab can offer a session (built-ins, MCP servers, HTTP tools)",
        description:
          "A session selects them by name in its config's `tools` (MCP tools are SERVER__TOOL; SERVER__* selects all of a server's); declared tools travel in the config and are not listed. Listing starts the lab config file's MCP servers.",
        responses: {
          200: ok("the tools", object({ tools: { type: "array", items: ref("ToolListing") } })),
          ...errors(502),
        },
      },
    },
    "/api/upstreams": {
      get: {
        operationId: "listUpstreams",
        summary:
          "The upstreams of the lab config file (agent-lab.yaml), as a new session may use them",
        description:
          "Names, base URLs, models and the *names* of their key variables with whether each is set; never a key.",
        responses: {
          200: ok(
            "the upstreams",
            object({
              upstreams: {
                type: "array",
                items: object({
                  name: { type: "string" },
                  base_url: { type: "string" },
                  model: { type: "string" },
                  mode: { type: "string", enum: ["chat_agent_tools", "dual_agent"] },
                  api_key_env: { anyOf: [{ type: "string" }, { type: "null" }] },
                  key_set: { type: "boolean" },
                  pass_client_key: { type: "boolean" },
                }),
              },
            }),
          ),
          ...errors(),
        },
      },
    },
    "/api/endpoints/check": {
      post: {
        operationId: "checkEndpoint",
        summary: "Test an OpenAI-compatible endpoint before a session is created on it",
        description:
          "The server asks `GET {base_url}/models` once (5 s at most) with the key from its own environment, and answers whether anything answered, whether a needed key is set (never the key), the listed model ids and whether the model is among them, and each problem in words naming the URL. Give base_url or upstream (neither: $OPENAI_BASE_URL, else OpenAI's).",
        requestBody: { required: true, content: json(ref("EndpointCheckBody")) },
        responses: {
          200: ok(
            "the check; `ok` when `problems` is empty",
            object({
              base_url: { type: "string" },
              model: { anyOf: [{ type: "string" }, { type: "null" }] },
              reachable: { type: "boolean" },
              key: object({
                env: { anyOf: [{ type: "string" }, { type: "null" }] },
                present: { type: "boolean" },
                needed: { type: "boolean" },
              }),
              models: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] },
              model_known: { anyOf: [{ type: "boolean" }, { type: "null" }] },
              problems: { type: "array", items: { type: "string" } },
              ok: { type: "boolean" },
            }),
          ),
          ...errors(400, 413, 415),
        },
      },
    },
    "/api/sessions": {
      get: {
        operationId: "listSessions",
        summary: "A page of sessions, most recently updated first (then id), filtered",
        description:
          "Filters combine with AND; an empty parameter (`q=`) is the same as none. Sessions that ran for an experiment are left out unless `include=experiments`, `experiments=include|only` or `experiment=ID` asks for them. A session updated while you page moves to the front: it is not handed out again on a later page (see it on a fresh first page).",
        parameters: [...pageParameters, ...sessionFilters],
        responses: {
          200: ok("the sessions", paged("sessions", ref("SessionPageItem"))),
          ...errors(400),
        },
      },
      post: {
        operationId: "createSession",
        summary: "Create a session; its config (mode, models, tools) is fixed from now on",
        description:
          "A config holding a secret (api_key, …) is refused: name an environment variable with api_key_env.",
        requestBody: { required: true, content: json(ref("CreateSessionBody")) },
        responses: {
          201: ok("created", object({ session: ref("Session") })),
          ...errors(400, 413, 415, 502),
        },
      },
    },
    "/api/sessions/{id}": {
      parameters: [sessionId],
      get: {
        operationId: "getSession",
        summary: "A session and its turns",
        responses: {
          200: ok(
            "the session",
            object({ session: ref("Session"), turns: { type: "array", items: ref("Turn") } }),
          ),
          ...errors(404),
        },
      },
      delete: {
        operationId: "deleteSession",
        summary: "Delete a session with its turns, messages, audit log and usage",
        responses: { 204: { description: "deleted" }, ...errors(404, 409) },
      },
    },
    "/api/sessions/{id}/turns": {
      parameters: [sessionId],
      get: {
        operationId: "listTurns",
        summary: "A page of the session's turns, oldest first, with how each ended",
        parameters: pageParameters,
        responses: {
          200: ok("the turns", paged("turns", ref("Turn"))),
          ...errors(400, 404),
        },
      },
      post: {
        operationId: "runTurn",
        summary: "Run one turn and stream its events (server-sent events)",
        description:
          "Each TurnEvent is one SSE event whose name is the event's `type` and whose data is the event as JSON: turn_start, then round_start … round_end per round, ending with turn_end. Refusals come before the stream, as JSON errors. Closing the connection cancels the turn, which is stored as cancelled.",
        requestBody: { required: true, content: json(ref("TurnBody")) },
        responses: {
          200: {
            description: "the turn's events",
            content: { "text/event-stream": { schema: ref("TurnEvent") } },
          },
          ...errors(400, 404, 409, 413, 415),
        },
      },
    },
    "/api/sessions/{id}/approvals": {
      parameters: [sessionId],
      get: {
        operationId: "listApprovals",
        summary: "The calls of the session's running turn that wait for approval",
        responses: {
          200: ok(
            "the waiting calls",
            object({ approvals: { type: "array", items: ref("PendingApproval") } }),
          ),
          ...errors(404),
        },
      },
    },
    "/api/sessions/{id}/approvals/{call_id}": {
      parameters: [
        sessionId,
        {
          name: "call_id",
          in: "path",
          required: true,
          description: "the waiting call's id",
          schema: { type: "string" },
        },
      ],
      post: {
        operationId: "decideApproval",
        summary: "Approve (optionally with edited arguments) or deny one waiting call",
        description:
          "Recorded as decided_by user. Edited arguments are checked against the tool's schema before it runs; invalid ones give the model an error result. A denied call gives the model the error `the user denied this call: REASON`.",
        requestBody: { required: true, content: json(ref("ApprovalBody")) },
        responses: {
          200: ok(
            "the decision was handed to the turn",
            object({ call_id: { type: "string" }, decision: { enum: ["approve", "deny"] } }),
          ),
          ...errors(400, 404, 409, 413, 415),
        },
      },
    },
    "/api/sessions/{id}/messages": {
      parameters: [sessionId],
      get: {
        operationId: "listMessages",
        summary:
          "A page of the conversation as stored, oldest first (assistant tool calls and their tool replies)",
        parameters: pageParameters,
        responses: {
          200: ok("the messages", paged("messages", ref("Message"))),
          ...errors(400, 404),
        },
      },
    },
    "/api/sessions/{id}/audit": {
      parameters: [sessionId],
      get: {
        operationId: "listAudit",
        summary: "A page of the audit trail of every step, oldest first",
        parameters: pageParameters,
        responses: {
          200: ok("the audit log", paged("audit", ref("AuditEntry"))),
          ...errors(400, 404),
        },
      },
    },
    "/api/sessions/{id}/usage": {
      parameters: [sessionId],
      get: {
        operationId: "usageSummary",
        summary: "The usage roll-ups per turn and for the session (the calls: /usage/calls)",
        responses: { 200: ok("the roll-ups", ref("UsageRollups")), ...errors(404) },
      },
    },
    "/api/sessions/{id}/usage/calls": {
      parameters: [sessionId],
      get: {
        operationId: "listUsageCalls",
        summary: "A page of the session's measured calls, in recording order",
        parameters: pageParameters,
        responses: { 200: ok("the calls", paged("calls", ref("UsageCall"))), ...errors(400, 404) },
      },
    },
    "/api/sessions/{id}/calls/{metric_key}": {
      parameters: [
        sessionId,
        {
          name: "metric_key",
          in: "path",
          required: true,
          description: "the call's metric key, from /usage/calls (URL-encoded)",
          schema: { type: "string" },
        },
      ],
      get: {
        operationId: "getCallPayload",
        summary:
          "One model call as it went over the wire: the request body sent and the raw stream",
        description:
          "Kept when the session's capture.payloads is on, or auto (the default) with the simulated model or an endpoint on a loopback address. Text shaped like a key is shown as [redacted]. A call without a payload (capture off, a call recorded before payloads were kept or imported with its session, a tool execution, an unknown key) is a 404 call_not_captured whose message says which.",
        responses: { 200: ok("the captured call", ref("CallPayload")), ...errors(404) },
      },
    },
    "/api/sessions/{id}/export": {
      parameters: [sessionId],
      get: {
        operationId: "exportSession",
        summary: "The whole session as one JSON document (sent as an attachment)",
        responses: { 200: ok("the export document", ref("SessionExport")), ...errors(404) },
      },
    },
    ...experimentPaths(),
    ...experimentRunPaths(),
    ...derivedSessionPaths(),
    "/api/import": {
      post: {
        operationId: "importSession",
        summary: "Store an exported session as a new session",
        parameters: [
          {
            name: "session_id",
            in: "query",
            required: false,
            description: "the id of the new session (default: the document's own)",
            schema: { type: "string" },
          },
        ],
        requestBody: { required: true, content: json(ref("SessionExport")) },
        responses: {
          201: ok("imported", object({ session: ref("Session") })),
          ...errors(400, 409, 413, 415),
        },
      },
    },
  };
}

// Experiments: read back from the sessions their runs stored (src/experiments).

const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: "null" }] });
const integer = { type: "integer" };
const number = { type: "number" };
const string = { type: "string" };
const costSource = {
  enum: ["reported", "estimated", "mixed", "unknown"],
  description:
    "reported: every call priced by its provider; estimated: by the price table; mixed: both; unknown: a call had no price (cost_usd is null)",
};
const category = {
  enum: ["simple", "multiple", "parallel", "irrelevance", "missing_parameter", "multi_turn"],
};

function experimentSchemas(): JsonObject {
  return {
    ExperimentListItem: object(
      {
        id: string,
        suite: string,
        sessions: integer,
        first_created_at: string,
        last_created_at: string,
        last_updated_at: { ...string, description: "the latest change to any of its sessions" },
        revision: {
          ...integer,
          description:
            "moves with every write to one of its sessions but a running turn's middle rounds (its start and end move it)",
        },
        running: { type: "boolean", description: "this server is running it now" },
        progress: { ...ref("ExperimentRunProgress"), description: "when running" },
      },
      [
        "id",
        "suite",
        "sessions",
        "first_created_at",
        "last_created_at",
        "last_updated_at",
        "revision",
        "running",
      ],
    ),
    RunScore: object({
      tool_precision: number,
      tool_recall: number,
      argument_match: number,
      irrelevance: nullable(number),
      answer: nullable(number),
      success: { type: "boolean" },
      failures: { type: "array", items: string },
    }),
    TurnFacts: object(
      {
        status: string,
        answer: string,
        rounds: integer,
        tool_calls: {
          type: "array",
          items: object({
            name: string,
            arguments: { type: "object" },
            ok: nullable({ type: "boolean" }),
            used_fallback: { type: "boolean" },
          }),
        },
        ttft_ms: nullable(number),
        wall_time_ms: nullable(number),
        prompt_tokens: integer,
        cached_tokens: integer,
        completion_tokens: integer,
        total_tokens: integer,
        fallback_count: integer,
        tool_count: integer,
        // A failed turn's reason, `code: message`, when it has one: not required.
        error: string,
      },
      TURN_FACTS_REQUIRED,
    ),
    RunResult: object({
      session_id: string,
      run_key: string,
      cell: string,
      scenario: string,
      category,
      repetition: integer,
      turns: { type: "array", items: ref("TurnFacts") },
      score: ref("RunScore"),
      cost_usd: nullable(number),
      cost_source: costSource,
    }),
    CellSummary: object({
      cell: string,
      label: string,
      runs: integer,
      successes: integer,
      success_rate: number,
      success_ci: { type: "array", items: number, minItems: 2, maxItems: 2 },
      ttft_p50_ms: nullable(number),
      ttft_p95_ms: nullable(number),
      wall_p50_ms: nullable(number),
      wall_p95_ms: nullable(number),
      tokens_per_turn: number,
      cached_share: number,
      fallback_rate: number,
      tool_error_rate: number,
      cost_usd: nullable(number),
      cost_source: costSource,
      by_category: {
        type: "object",
        additionalProperties: object({ runs: integer, successes: integer }),
      },
    }),
    ExperimentReport: object({
      experiment_id: string,
      suite: string,
      generated_at: string,
      simulated: { type: "boolean" },
      cells: { type: "array", items: ref("CellSummary") },
      runs: { type: "array", items: ref("RunResult") },
      incomplete: integer,
    }),
    CellRun: object({
      session_id: string,
      run_key: string,
      scenario: string,
      category,
      repetition: integer,
      incomplete: { type: "boolean" },
      score: nullable(ref("RunScore")),
      cost_usd: nullable(number),
      cost_source: costSource,
    }),
  };
}

const experimentId = {
  name: "id",
  in: "path",
  required: true,
  description: "the experiment id (the `experiment.id` of its runs' session configs)",
  schema: { type: "string" },
};

const cacheHeader = {
  "x-agent-lab-cache": {
    description:
      "hit: the report came from the server's cache (nothing about the experiment changed since it was built); miss: built for this request",
    schema: { enum: ["hit", "miss"] },
  },
};

/** A 404 that names what experiments can miss, with the other shared errors. */
function experimentErrors(): JsonObject {
  return {
    ...errors(400),
    404: {
      description:
        "no session carries this experiment id, or the experiment has no such cell (not_found)",
      content: json(ref("Error")),
    },
  };
}

function experimentPaths(): JsonObject {
  return {
    "/api/experiments": {
      get: {
        operationId: "listExperiments",
        summary: "The experiments in the store, a page at a time",
        description:
          "Latest `last_created_at` first, then id; from one grouped query over the indexed experiment id of the sessions. `experiment` narrows it to that one (what a page watching it polls for its `revision`).",
        parameters: [
          ...pageParameters,
          {
            name: "experiment",
            in: "query",
            required: false,
            description: "only this experiment",
            schema: { type: "string", minLength: 1, maxLength: 200 },
          },
        ],
        responses: {
          200: ok(
            "a page of experiments",
            object({
              experiments: { type: "array", items: ref("ExperimentListItem") },
              next_cursor: nextCursor,
            }),
          ),
          ...errors(400),
        },
      },
      post: startExperimentOperation,
    },
    "/api/experiments/{id}": {
      parameters: [experimentId],
      get: {
        operationId: "getExperiment",
        parameters: [
          {
            name: "runs",
            in: "query",
            description:
              "false: `runs` comes back empty (the cells are all a matrix page needs; at 50,000 runs the list is ~50 MB of JSON)",
            schema: { type: "boolean", default: true },
          },
        ],
        summary: "The experiment's report: each finished run scored, summarized per cell",
        description:
          "Each run key counts once, with its finished session. Run keys with none yet (a turn running, cancelled or interrupted, or one missing) are left out and counted in `incomplete`. Built once and served from a cache until a session of the experiment is added, deleted or changes (a run finishing); `generated_at` says when it was built.",
        responses: {
          200: { ...ok("the report", ref("ExperimentReport")), headers: cacheHeader },
          ...experimentErrors(),
        },
      },
    },
    "/api/experiments/{id}/cells/{cell}/sessions": {
      parameters: [
        experimentId,
        {
          name: "cell",
          in: "path",
          required: true,
          description: "the cell id, URL-encoded",
          schema: { type: "string" },
        },
      ],
      get: {
        operationId: "listCellRuns",
        summary: "The runs of one cell, a page at a time (incomplete ones last, without a score)",
        parameters: [
          ...pageParameters,
          {
            name: "order",
            in: "query",
            description:
              "`run` (default): by scenario, then repetition, the incomplete ones last; `failed_first`: over the whole cell, the failed runs, then the incomplete, then the passed, each in run order. A cursor belongs to its order.",
            schema: { type: "string", enum: ["run", "failed_first"], default: "run" },
          },
        ],
        responses: {
          200: {
            ...ok(
              "a page of the cell's runs",
              object({
                sessions: { type: "array", items: ref("CellRun") },
                next_cursor: nextCursor,
              }),
            ),
            headers: cacheHeader,
          },
          ...experimentErrors(),
        },
      },
    },
  };
}

export function openApiDocument(version: string): JsonObject {
  return {
    openapi: "3.1.0",
    info: {
      title: "Agent Lab",
      version,
      description:
        "The local HTTP API of Agent Lab: sessions, live turns over server-sent events, audit, usage, export and import. JSON with snake_case fields; errors are { error: { code, message } }.",
    },
    servers: [{ url: "/" }],
    security: [{}, { bearer: [] }],
    paths: paths(),
    components: components(),
  };
}
