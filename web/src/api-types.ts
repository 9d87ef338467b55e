/**
 * The HTTP API's JSON shapes, as the UI reads them. Records come from the domain (types only: the
 * UI never imports runtime code from src/).
 */
import type { CallPayloadRecord } from "../../src/domain/call-capture.js";
import type { ToolCallEvent } from "../../src/domain/events.js";
import type {
  CellRun,
  CellSummary,
  ExperimentListItem,
  ExperimentReport,
  ExperimentReportWithProgress,
  RunResult,
  RunScore,
  ScenarioCategory,
  TurnFacts,
} from "../../src/domain/experiment.js";
import type {
  ExperimentRunProgress,
  ScenarioComparison,
  ScenarioList,
  ScenarioRun,
} from "../../src/domain/experiment-live.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionOverview,
  SessionRecord,
  TurnRecord,
} from "../../src/domain/records.js";
import type { ToolInvocationMode } from "../../src/domain/session-config.js";
import type { TurnEvent, TurnStatus } from "../../src/domain/turn-events.js";
import type {
  AgentRole,
  CallKind,
  TurnUsageRollup,
  UsageCallRecord,
  UsageRollup,
  UsageSummary,
} from "../../src/domain/usage.js";

export type {
  AgentRole,
  AuditRecord,
  CallKind,
  CallPayloadRecord,
  CellRun,
  CellSummary,
  ExperimentListItem,
  ExperimentReport,
  MessageRecord,
  RunResult,
  RunScore,
  ScenarioCategory,
  SessionOverview,
  SessionRecord,
  ToolCallEvent,
  ToolInvocationMode,
  TurnEvent,
  TurnFacts,
  TurnRecord,
  TurnStatus,
  TurnUsageRollup,
  UsageCallRecord,
  UsageRollup,
  UsageSummary,
};

export const TOOL_INVOCATION_MODES: readonly ToolInvocationMode[] = [
  "dual_agent",
  "chat_agent_tools",
];

export const BUILTIN_TOOLS = ["mock_search", "mock_ticket"] as const;

export interface AgentSettings {
  model: string;
  /** An OpenAI-compatible endpoint (openai:MODEL); the key's variable by name only. */
  base_url?: string;
  api_key_env?: string;
  system_prompt?: string;
  /** Adapter options, e.g. the simulated model's `first_token_ms`, `tokens_per_second`. */
  options?: Record<string, unknown>;
}

export interface NewSessionConfig {
  tool_invocation_mode: ToolInvocationMode;
  chat_agent: AgentSettings;
  event_agent: AgentSettings;
  tools: string[];
  /** Mock tools defined inline (DeclaredTool, src/domain/tool-sources.ts); the server validates. */
  declared_tools?: unknown[];
  max_rounds?: number;
}

/** One tool of `GET /api/tools`. */
export interface ToolListing {
  name: string;
  source: "builtin" | "declared" | "http" | "mcp";
  description: string;
  parameters: Record<string, unknown>;
  requires_approval: boolean;
}

export interface HealthResponse {
  ok: boolean;
  version: string;
}

/**
 * A row of the paged session list: `SessionPageItem` of src/domain/session-query.ts, spelled out
 * here because that module also holds the cursor codec, which uses Node's Buffer (not in a
 * browser's type library).
 */
export interface SessionPageItem extends SessionOverview {
  tags: string[];
  experiment_id: string | null;
  /** The latest turn's status; null for a session without turns. */
  last_status: TurnRecord["status"] | null;
}

/** Every list of the API is keyset-paged: pass `next_cursor` back for the next page. */
export interface PageParams {
  limit?: number;
  cursor?: string | null;
}

export interface SessionListResponse {
  sessions: SessionPageItem[];
  next_cursor: string | null;
}

export interface SessionResponse {
  session: SessionRecord;
}

export interface SessionDetailResponse {
  session: SessionRecord;
  turns: TurnRecord[];
}

export interface MessagesResponse {
  messages: MessageRecord[];
  next_cursor: string | null;
}

export interface AuditResponse {
  audit: AuditRecord[];
  next_cursor: string | null;
}

export interface TurnsResponse {
  turns: TurnRecord[];
  next_cursor: string | null;
}

/** `GET /api/sessions/:id/usage`: roll-ups only; the calls come a page at a time. */
export type UsageRollupsResponse = Omit<UsageSummary, "calls">;

export interface UsageCallsResponse {
  calls: UsageCallRecord[];
  next_cursor: string | null;
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}

export interface ExperimentListResponse {
  experiments: ExperimentListItem[];
  next_cursor: string | null;
}

export type ExperimentReportResponse = ExperimentReportWithProgress;

export interface CellRunsResponse {
  sessions: CellRun[];
  next_cursor: string | null;
}

/** A suite the server can start (`GET /api/suites`): bundled, or in a configured folder. */
export interface SuiteListing {
  name: string;
  file: string;
  description: string | null;
  /** How many scenarios it has. */
  scenarios: number;
  categories: string[];
  /** The configurations its matrix makes, each a column of the report. */
  cells: { id: string; label: string }[];
  repetitions: number;
  concurrency: number;
}

export interface SuiteListResponse {
  suites: SuiteListing[];
  /** Files of the suite folders that do not parse, with their problems (file:line:col). */
  invalid?: { file: string; error: string }[];
}

/** `POST /api/experiments`: a suite by name (never a path), optionally narrowed. */
export interface StartExperimentRequest {
  suite: string;
  cells?: string[];
  repetitions?: number;
  concurrency?: number;
}

export interface StartExperimentResponse {
  experiment_id: string;
  /** Runs of the plan; `skipped` of them had finished before (a resumed experiment). */
  total: number;
  skipped: number;
  events_url: string;
}

/** Where a running experiment stands, as its events report it. */
export type ExperimentProgress = ExperimentRunProgress;

/** A row of `GET /api/experiments`; a running one carries its progress. */
export type ExperimentListRow = ExperimentListItem & {
  running?: boolean;
  progress?: ExperimentProgress | null;
};

export type { ScenarioRun };

/**
 * `GET /api/experiments/:id/scenarios/:scenario`: that scenario's finished runs in every cell,
 * at most the first 50 repetitions of a cell (`runs_total` says how many it has).
 */
export type ScenarioRunsResponse = ScenarioComparison;

/** `GET /api/experiments/:id/scenarios`: every scenario with a run, by category then id. */
export type ScenarioListResponse = ScenarioList;

export interface EndpointCheckRequest {
  base_url?: string;
  upstream?: string;
  model?: string;
  api_key_env?: string;
}

export type {
  EndpointCheck as EndpointCheckResult,
  UpstreamListing,
} from "../../src/domain/endpoint-check.js";
