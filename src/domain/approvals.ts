import { z } from "zod";
import type { ApprovalDecision } from "./tool-sources.js";

/**
 * Approvals (issue 10): a call to a tool that requires approval waits, before it runs, for a
 * decision from whoever drives the turn (a person in the UI, the API or the CLI prompt, or a
 * policy). The wait is measured apart from the tool's latency and the turn's wall time.
 */

/** A call waiting for a decision: what the approver is shown. */
export interface ApprovalRequest {
  session_id: string;
  turn_index: number;
  round_index: number;
  /** The tool call's id (`call_id` in the API). */
  event_id: string;
  event_name: string;
  arguments: Record<string, unknown>;
}

/** The approval port a turn consults; `signal` aborts when the turn ends (cancel, failure). */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalDecision>;

/** Per-tool overrides of `requires_approval` in a session config: `{ mock_ticket: false }`. */
export const ApprovalOverrides = z.record(z.string().min(1), z.boolean());

/** How long a call may wait for a decision before it is denied (decided_by `timeout`). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 600_000;

/** `all` approves, `none` denies (both decided_by `policy`), `ask` asks a person. */
export const ApprovalPolicy = z.enum(["all", "none", "ask"]);
export type ApprovalPolicy = z.infer<typeof ApprovalPolicy>;

/** An approver that decides every call the same way, recorded as decided by policy. */
export function policyApprover(policy: "all" | "none"): Approver {
  const decision: ApprovalDecision =
    policy === "all"
      ? { decision: "approve", decided_by: "policy", reason: "approved by policy" }
      : { decision: "deny", decided_by: "policy", reason: "denied by policy (approval: none)" };
  return async () => decision;
}

/** What a turn without an approver does: nobody can be asked, so the call is denied. */
export const NO_APPROVER_DECISION: ApprovalDecision = {
  decision: "deny",
  decided_by: "policy",
  reason: "no approver: nobody can approve this call in this run",
};

/** The tool error the model reads for a denied call. */
export function denialMessage(decision: ApprovalDecision): string {
  const reason = decision.reason ? `: ${decision.reason}` : "";
  switch (decision.decided_by) {
    case "user":
      return `the user denied this call${reason}`;
    case "timeout":
      return `the call was denied: nobody approved it in time${reason}`;
    default:
      return `the call was denied by policy${reason}`;
  }
}
