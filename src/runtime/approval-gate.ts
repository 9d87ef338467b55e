import {
  type ApprovalRequest,
  type Approver,
  denialMessage,
  NO_APPROVER_DECISION,
} from "../domain/approvals.js";
import type { ToolCallEvent } from "../domain/events.js";
import { ApprovalDecision } from "../domain/tool-sources.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { Tool } from "../tools/tool.js";
import { auditPayload } from "./audit-payload.js";
import { elapsedSince, roundMs } from "./elapsed.js";

/**
 * Time during which at least one call of the turn waited for a decision. Several calls may wait at
 * once (dual_agent dispatches early), so the turn's paused time is the union of their waits, not
 * the sum; the turn's wall time excludes it.
 */
export class PauseClock {
  #waiting = 0;
  #since = 0;
  #total = 0;

  begin(): void {
    if (this.#waiting++ === 0) this.#since = performance.now();
  }

  end(): void {
    if (--this.#waiting === 0) this.#total += performance.now() - this.#since;
  }

  /** Paused milliseconds so far, including a pause still going on. */
  total_ms(): number {
    const open = this.#waiting > 0 ? performance.now() - this.#since : 0;
    return roundMs(this.#total + open);
  }
}

export interface ApprovalScope {
  session_id: string;
  turn_index: number;
  /** The caller's approver; without one every call that needs approval is denied. */
  approve: Approver | undefined;
  /** Per-tool overrides from the session config (`approvals`). */
  overrides: Readonly<Record<string, boolean>>;
  timeout_ms: number;
  pauses: PauseClock;
  signal: AbortSignal;
  emit(event: TurnEvent): void;
  audit(event: string, details: Record<string, unknown>, round_index?: number): Promise<void>;
}

export type GateOutcome =
  | { kind: "approved"; arguments: Record<string, unknown>; edited: boolean; wait_ms: number }
  | { kind: "denied"; error: string; wait_ms: number }
  | { kind: "interrupted"; wait_ms: number };

/** Whether a call to `tool` waits for a decision: the session's override, else the tool's own. */
export function requiresApproval(
  tool: Tool | undefined,
  overrides: Readonly<Record<string, boolean>>,
): boolean {
  if (tool === undefined) return false;
  return overrides[tool.name] ?? tool.requires_approval === true;
}

/**
 * Asks for a decision on one call and records it (turn events, audit). Never throws for the
 * approver's sake: an approver that fails or answers nonsense denies the call, a timeout denies it
 * (decided_by `timeout`), and the turn ending while it waits answers it `interrupted`.
 */
export async function awaitApproval(
  scope: ApprovalScope,
  event: ToolCallEvent,
  round_index: number,
): Promise<GateOutcome> {
  const request: ApprovalRequest = {
    session_id: scope.session_id,
    turn_index: scope.turn_index,
    round_index,
    event_id: event.id,
    event_name: event.name,
    arguments: structuredClone(event.arguments),
  };
  await scope.audit(
    "approval_required",
    { event_id: event.id, event_name: event.name, arguments: auditPayload(event.arguments) },
    round_index,
  );
  scope.emit({
    type: "approval_required",
    round_index,
    event_id: event.id,
    event_name: event.name,
    arguments: request.arguments,
    timeout_ms: scope.timeout_ms,
  });
  const startedAt = performance.now();
  scope.pauses.begin();
  let decided: ApprovalDecision | null;
  try {
    decided = await decide(scope, request);
  } finally {
    scope.pauses.end();
  }
  const wait_ms = elapsedSince(startedAt);
  if (decided === null) {
    await scope.audit(
      "approval_interrupted",
      { event_id: event.id, event_name: event.name, wait_ms },
      round_index,
    );
    return { kind: "interrupted", wait_ms };
  }
  const edited = decided.decision === "approve" && decided.arguments !== undefined;
  await scope.audit(
    "approval_decided",
    {
      event_id: event.id,
      event_name: event.name,
      decision: decided.decision,
      decided_by: decided.decided_by,
      reason: decided.reason ?? null,
      wait_ms,
      ...(edited ? { edited_arguments: auditPayload(decided.arguments) } : {}),
    },
    round_index,
  );
  scope.emit({
    type: "approval_decided",
    round_index,
    event_id: event.id,
    event_name: event.name,
    decision: decided.decision,
    decided_by: decided.decided_by,
    reason: decided.reason ?? null,
    arguments: edited ? (decided.arguments ?? null) : null,
    wait_ms,
  });
  if (decided.decision === "deny")
    return { kind: "denied", error: denialMessage(decided), wait_ms };
  return {
    kind: "approved",
    arguments: decided.arguments ?? event.arguments,
    edited,
    wait_ms,
  };
}

/** The decision, or null when the turn ended first. */
async function decide(
  scope: ApprovalScope,
  request: ApprovalRequest,
): Promise<ApprovalDecision | null> {
  if (scope.signal.aborted) return null;
  if (scope.approve === undefined) return NO_APPROVER_DECISION;
  const asking = new AbortController();
  const { signal } = scope;
  return new Promise<ApprovalDecision | null>((resolve) => {
    let settled = false;
    const settle = (value: ApprovalDecision | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      // The approver stops asking (a prompt closes, a pending entry is withdrawn).
      asking.abort();
      resolve(value);
    };
    const onAbort = () => settle(null);
    const timer = setTimeout(
      () =>
        settle({
          decision: "deny",
          decided_by: "timeout",
          reason: `no decision within ${scope.timeout_ms} ms`,
        }),
      Math.min(scope.timeout_ms, 2_147_483_647),
    );
    signal.addEventListener("abort", onAbort, { once: true });
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(scope.approve?.(request, asking.signal));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        const parsed = ApprovalDecision.safeParse(value);
        settle(
          parsed.success
            ? parsed.data
            : {
                decision: "deny",
                decided_by: "policy",
                reason: "the approver gave no valid decision",
              },
        );
      },
      (error: unknown) =>
        settle({
          decision: "deny",
          decided_by: "policy",
          reason: `the approver failed: ${error instanceof Error ? error.message : String(error)}`,
        }),
    );
  });
}
