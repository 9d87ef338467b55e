import type { ToolCallEvent } from "./events.js";
import type { MessageRole } from "./messages.js";
import type { ToolInvocationMode } from "./session-config.js";

/** A row of `listSessions`: exactly the seed's keys. */
export interface SessionListItem {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  turn_count: number;
  total_tokens: number;
}

/**
 * A row of `listSessionOverviews`: the `listSessions` keys plus what a session list shows about
 * each session's config (its mode, and the chat and event agents' model strings).
 */
export interface SessionOverview extends SessionListItem {
  tool_invocation_mode: ToolInvocationMode;
  chat_model: string;
  event_model: string;
}

export interface SessionRecord {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  tool_invocation_mode: ToolInvocationMode;
  config: Record<string, unknown>;
}

export interface MessageRecord {
  id: number;
  session_id: string;
  turn_index: number;
  role: MessageRole;
  content: string;
  name: string | null;
  tool_call_id: string | null;
  tool_calls: ToolCallEvent[];
  /** Added in schema v3: an assistant's thinking and refusal text, null when none. */
  reasoning: string | null;
  refusal: string | null;
  created_at: string;
}

export interface AuditRecord {
  id: number;
  session_id: string;
  turn_index: number | null;
  round_index: number | null;
  event: string;
  details: Record<string, unknown>;
  created_at: string;
}

export type TurnRecordStatus =
  | "running"
  | "completed"
  | "cancelled"
  | "failed"
  | "max_rounds"
  | "interrupted";

export interface TurnRecord {
  turn_index: number;
  user_message: string;
  started_at: string;
  completed_at: string | null;
  wall_time_ms: number | null;
  status: TurnRecordStatus;
  runner: string | null;
}
