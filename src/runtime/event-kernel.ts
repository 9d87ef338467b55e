import type { ToolCallEvent } from "../domain/events.js";
import { cutText } from "../domain/limits.js";
import type { ChatMessage } from "../domain/messages.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { tokenUsage, UsageMetadata } from "../domain/usage.js";
import type { ToolRegistry, ToolRunResult } from "../tools/registry.js";
import { ToolText } from "../tools/tool.js";
import { type ApprovalScope, awaitApproval, requiresApproval } from "./approval-gate.js";
import { auditPayload } from "./audit-payload.js";
import type { TurnRecords } from "./turn-records.js";

/**
 * A tool call's usage metadata but for the fields that name the call: the schema's defaults (read
 * once, so a field added there is filled here too), for a call that spends no tokens.
 */
const TOOL_CALL_METADATA = {
  ...UsageMetadata.parse({}),
  agent: "event_kernel",
  call_kind: "tool_execution",
  usage_source: "endpoint",
} as const;

export interface KernelScope {
  /** Where the call's usage row is held until the round is written. */
  records: TurnRecords;
  session_id: string;
  turn_index: number;
  tools: ToolRegistry;
  signal: AbortSignal;
  /** `limits.max_tool_result_chars`: a longer result is cut, with a marker, before it is stored. */
  max_result_chars: number;
  emit(event: TurnEvent): void;
  audit(event: string, details: Record<string, unknown>, round_index?: number): Promise<void>;
  /** Calls to tools that require approval wait here first. */
  approvals: Omit<ApprovalScope, "emit" | "audit" | "signal" | "session_id" | "turn_index">;
}

export interface ExecuteOptions {
  round_index: number;
  used_fallback: boolean;
  /** Set when the arguments never became an object (not JSON): the tool is not run. */
  argument_error?: string | null;
  /** Told when an approver edited the arguments, so the stored call shows what actually ran. */
  on_edit?: (edited: ToolCallEvent) => void;
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
    const { records, turn_index } = this.scope;
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
    // Arguments that are not JSON are refused here, unless the tools run elsewhere and their
    // owner answers every call (a gateway client in pass-through, which got the call as written).
    const { outcome, approval_wait_ms } =
      options.argument_error && !this.scope.tools.runsEveryCall
        ? {
            outcome: failure("invalid_arguments", options.argument_error),
            approval_wait_ms: null,
          }
        : await this.#run(event, options);
    const content = cutText(
      outcome.ok ? resultText(outcome.value) : JSON.stringify({ error: outcome.error }),
      this.scope.max_result_chars,
      "tool result",
    );
    records.usage({
      turn_index,
      round_index,
      usage: tokenUsage(),
      ttft_ms: null,
      elapsed_ms: outcome.latency_ms,
      metadata: {
        ...TOOL_CALL_METADATA,
        event_id: event.id,
        event_name: event.name,
        used_fallback,
        // The tool alone, never an approval wait (that is in the tool_end audit row).
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
        ...(approval_wait_ms === null ? {} : { approval_wait_ms }),
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

  /**
   * Runs the call, first waiting for a decision when its tool requires approval. Arguments that
   * do not fit the schema are refused before anyone is asked, and edited ones are checked again.
   */
  async #run(
    event: ToolCallEvent,
    options: ExecuteOptions,
  ): Promise<{ outcome: ToolRunResult; approval_wait_ms: number | null }> {
    const { tools, signal, approvals } = this.scope;
    const run = (args: Record<string, unknown>) =>
      tools.run(event.name, args, { signal, call_id: event.id });
    if (!requiresApproval(tools.get(event.name), approvals.overrides)) {
      return { outcome: await run(event.arguments), approval_wait_ms: null };
    }
    const valid = tools.validate(event.name, event.arguments);
    if (!valid.ok) {
      return { outcome: failure("invalid_arguments", valid.error), approval_wait_ms: null };
    }
    const gate = await awaitApproval(
      {
        ...approvals,
        session_id: this.scope.session_id,
        turn_index: this.scope.turn_index,
        signal,
        emit: this.scope.emit,
        audit: this.scope.audit,
      },
      event,
      options.round_index,
    );
    const approval_wait_ms = gate.wait_ms;
    if (gate.kind === "interrupted") {
      return { outcome: failure("interrupted", "interrupted"), approval_wait_ms };
    }
    if (gate.kind === "denied") return { outcome: failure("denied", gate.error), approval_wait_ms };
    if (gate.edited) {
      const edited = tools.validate(event.name, gate.arguments);
      if (!edited.ok) {
        const error = `the edited arguments are invalid: ${edited.error}`;
        return { outcome: failure("invalid_arguments", error), approval_wait_ms };
      }
      options.on_edit?.({
        ...event,
        arguments: gate.arguments,
        raw_arguments: JSON.stringify(gate.arguments),
      });
    }
    return { outcome: await run(gate.arguments), approval_wait_ms };
  }
}

function failure(
  kind: Extract<ToolRunResult, { ok: false }>["kind"],
  error: string,
): ToolRunResult {
  return { ok: false, error, latency_ms: 0, kind };
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

function resultText(value: unknown): string {
  return value instanceof ToolText ? value.text : JSON.stringify(value ?? null);
}
