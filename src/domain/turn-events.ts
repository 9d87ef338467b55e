import type { ToolCallEvent } from "./events.js";
import type { ToolInvocationMode } from "./session-config.js";
import type { AgentRole, CallKind, TokenUsage, TurnUsageRollup, UsageSource } from "./usage.js";

/**
 * What a running turn reports, in order, to whoever watches it (the CLI, the HTTP API's SSE, the
 * web UI). Data only, snake_case, JSON-safe: the same objects travel over the wire.
 */
export type TurnStatus = "completed" | "cancelled" | "failed" | "max_rounds";

export type TurnEvent =
  | {
      type: "turn_start";
      session_id: string;
      turn_index: number;
      mode: ToolInvocationMode;
      simulated: boolean;
    }
  | { type: "round_start"; round_index: number }
  | { type: "text_delta"; round_index: number; text: string }
  /** The chat agent's thinking, streamed; the answer's text never contains it. */
  | { type: "reasoning_delta"; round_index: number; text: string }
  | { type: "refusal_delta"; round_index: number; text: string }
  | {
      type: "retry";
      round_index: number;
      agent: AgentRole;
      attempt: number;
      status: number | null;
      reason: string;
      delay_ms: number;
    }
  /** A tool call the chat agent asked for, as it asked (arguments may still be invalid). */
  | { type: "tool_call"; round_index: number; event: ToolCallEvent }
  | {
      type: "fallback_start";
      round_index: number;
      event_id: string;
      event_name: string;
      reason: string;
    }
  | {
      type: "fallback_end";
      round_index: number;
      event_id: string;
      ok: boolean;
      event: ToolCallEvent | null;
      error: string | null;
    }
  /** A call to a tool that requires approval waits for a decision before it runs. */
  | {
      type: "approval_required";
      round_index: number;
      event_id: string;
      event_name: string;
      arguments: Record<string, unknown>;
      timeout_ms: number;
    }
  | {
      type: "approval_decided";
      round_index: number;
      event_id: string;
      event_name: string;
      decision: "approve" | "deny";
      decided_by: "user" | "policy" | "timeout";
      reason: string | null;
      /** The edited arguments, when the approver changed them. */
      arguments: Record<string, unknown> | null;
      /** Time spent waiting, kept apart from the tool's latency and the turn's wall time. */
      wait_ms: number;
    }
  | {
      type: "tool_result";
      round_index: number;
      event_id: string;
      event_name: string;
      ok: boolean;
      /** What goes back to the model (JSON text). */
      content: string;
      latency_ms: number;
      used_fallback: boolean;
    }
  | {
      type: "usage";
      round_index: number;
      agent: AgentRole;
      call_kind: CallKind;
      metric_key: string;
      usage: TokenUsage;
      estimated: boolean;
      usage_source: UsageSource;
      /** The call's cost as `callCost` gives it, and whether the provider reported it. */
      cost_usd: number | null;
      cost_source: "reported" | "estimated" | null;
      response_model: string | null;
      ttft_ms: number | null;
      elapsed_ms: number;
    }
  | { type: "round_end"; round_index: number; finish_reason: string | null; tool_calls: number }
  | { type: "error"; code: string; message: string }
  | {
      type: "turn_end";
      session_id: string;
      turn_index: number;
      status: TurnStatus;
      /** The user-visible text of the final round (tags removed). */
      answer: string;
      wall_time_ms: number;
      usage: TurnUsageRollup;
    };
