import type { ToolCallEvent } from "../domain/events.js";
import { cutText } from "../domain/limits.js";
import type { ChatMessage } from "../domain/messages.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { SessionStore } from "../store/session-store.js";
import type { ToolRegistry } from "../tools/registry.js";
import { auditPayload } from "./audit-payload.js";

export interface KernelScope {
  store: SessionStore;
  session_id: string;
  turn_index: number;
  tools: ToolRegistry;
  signal: AbortSignal;
  /** `limits.max_tool_result_chars`: a longer result is cut, with a marker, before it is stored. */
  max_result_chars: number;
  emit(event: TurnEvent): void;
  audit(event: string, details: Record<string, unknown>, round_index?: number): Promise<void>;
}

export interface ExecuteOptions {
  round_index: number;
  used_fallback: boolean;
  /** Set when the arguments never became an object (not JSON): the tool is not run. */
  argument_error?: string | null;
}

/**
 * The deterministic part of the runtime: runs one event through the registry (validation, timeout,
 * abort) and records it as a `tool_execution` call, whichever mode asked for it. Every event gets
 * exactly one such call, executed or refused, so tool counts compare across modes. Tool failures
 * come back as data for the model; only the store failing can make this throw.
 */
export class EventKernel {
  constructor(private readonly scope: KernelScope) {}

  async execute(event: ToolCallEvent, options: ExecuteOptions): Promise<ChatMessage> {
    const { store, session_id, turn_index, tools, signal } = this.scope;
    const { round_index, used_fallback } = options;
    await this.scope.audit(
      "tool_start",
      {
        event_id: event.id,
        event_name: event.name,
        arguments: auditPayload(event.arguments),
        used_fallback,
      },
      round_index,
    );
    const outcome = options.argument_error
      ? ({
          ok: false,
          error: options.argument_error,
          latency_ms: 0,
          kind: "invalid_arguments",
        } as const)
      : await tools.run(event.name, event.arguments, { signal });
    const content = cutText(
      outcome.ok ? JSON.stringify(outcome.value ?? null) : JSON.stringify({ error: outcome.error }),
      this.scope.max_result_chars,
      "tool result",
    );
    await store.appendUsage(session_id, {
      turn_index,
      round_index,
      usage: {},
      ttft_ms: null,
      elapsed_ms: outcome.latency_ms,
      metadata: {
        agent: "event_kernel",
        call_kind: "tool_execution",
        event_id: event.id,
        event_name: event.name,
        used_fallback,
        tool_latency_ms: outcome.latency_ms,
        metric_key: `tool:${turn_index}:${round_index}:${event.id}`,
      },
    });
    await this.scope.audit(
      "tool_end",
      {
        event_id: event.id,
        event_name: event.name,
        ok: outcome.ok,
        latency_ms: outcome.latency_ms,
        result_chars: content.length,
        ...(outcome.ok ? {} : { error: auditPayload(outcome.error), error_kind: outcome.kind }),
      },
      round_index,
    );
    this.scope.emit({
      type: "tool_result",
      round_index,
      event_id: event.id,
      event_name: event.name,
      ok: outcome.ok,
      content,
      latency_ms: outcome.latency_ms,
      used_fallback,
    });
    return { role: "tool", content, name: event.name, tool_call_id: event.id, tool_calls: [] };
  }
}

/** The reply stored for a tool call whose turn ended before it did. */
export function interruptedReply(event: Pick<ToolCallEvent, "id" | "name">): ChatMessage {
  return {
    role: "tool",
    content: JSON.stringify({
      error: "interrupted: the turn ended before this tool call finished",
    }),
    name: event.name,
    tool_call_id: event.id,
    tool_calls: [],
  };
}
