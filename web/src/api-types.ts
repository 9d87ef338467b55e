/**
 * The HTTP API's JSON shapes, as the UI reads them. Records come from the domain (types only: the
 * UI never imports runtime code from src/).
 */
import type { ToolCallEvent } from "../../src/domain/events.js";
import type {
  CellSummary,
  ExperimentReport,
  RunResult,
  RunScore,
  ScenarioCategory,
  TurnFacts,
} from "../../src/domain/experiment.js";
import type {
  AuditRecord,
  MessageRecord,
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
  CellSummary,
  MessageRecord,
  RunResult,
  RunScore,
  ScenarioCategory,
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

export interface SessionSummary {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  turn_count: number;
  total_tokens: number;
  tool_invocation_mode: ToolInvocationMode;
  chat_model: string;
  event_model: string;
}

export interface AgentSettings {
  model: string;
  /** Adapter options, e.g. the simulated model's `first_token_ms`, `tokens_per_second`. */
  options?: Record<string, unknown>;
}

export interface NewSessionConfig {
  tool_invocation_mode: ToolInvocationMode;
  chat_agent: AgentSettings;
  event_agent: AgentSettings;
  tools: string[];
  max_rounds?: number;
}

export interface HealthResponse {
  ok: boolean;
  version: string;
}

export interface SessionListResponse {
  sessions: SessionSummary[];
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
}

export interface AuditResponse {
  audit: AuditRecord[];
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}

export interface ExperimentListItem {
  id: string;
  suite: string;
  /** Sessions (runs) tagged with this experiment, incomplete ones included. */
  sessions: number;
  first_created_at: string;
  last_created_at: string;
}

export interface ExperimentListResponse {
  experiments: ExperimentListItem[];
}

export interface ExperimentReportResponse extends ExperimentReport {
  /**
   * Run keys with no finished session (a turn running, cancelled or interrupted, or one missing):
   * not scored, not counted. A run resumed to the end is not among them.
   */
  incomplete: number;
}

/** One run of a cell in the drill-down. */
export interface CellRun {
  session_id: string;
  run_key: string;
  scenario: string;
  category: ScenarioCategory;
  repetition: number;
  incomplete: boolean;
  score: RunScore | null;
  cost_usd: number | null;
}

export interface CellRunsResponse {
  sessions: CellRun[];
}
