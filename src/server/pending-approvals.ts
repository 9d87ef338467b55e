import type { ApprovalRequest, Approver } from "../domain/approvals.js";
import { AgentLabError } from "../domain/errors.js";
import type { ApprovalDecision } from "../domain/tool-sources.js";

/** A call no running turn of this server is waiting on (never was, or already answered). */
export class ApprovalNotFoundError extends AgentLabError {
  readonly code = "approval_not_found" as const;
  constructor(sessionId: string, callId: string) {
    super(`session ${sessionId} has no call ${callId} waiting for approval`);
  }
}

/** A second answer to the same call. */
export class ApprovalDecidedError extends AgentLabError {
  readonly code = "approval_decided" as const;
  constructor(callId: string) {
    super(`call ${callId} was already decided`);
  }
}

export interface PendingApproval {
  call_id: string;
  session_id: string;
  turn_index: number;
  round_index: number;
  event_name: string;
  arguments: Record<string, unknown>;
  requested_at: string;
}

interface Entry {
  approval: PendingApproval;
  resolve(decision: ApprovalDecision): void;
}

/** Answered call ids remembered per session, so a second answer is 409 rather than 404. */
const DECIDED_KEPT = 200;

/**
 * The calls this server's turns are waiting on, answered through the API (the web UI's Approve /
 * Deny). A turn's approver registers its call and is withdrawn when the turn stops asking (a
 * decision, a timeout, a cancelled turn): only a call still waiting can be answered.
 */
export class PendingApprovals {
  readonly #waiting = new Map<string, Map<string, Entry>>();
  readonly #decided = new Map<string, string[]>();

  readonly approve: Approver = (request: ApprovalRequest, signal: AbortSignal) =>
    new Promise<ApprovalDecision>((resolve) => {
      const { session_id, event_id } = request;
      const calls = this.#waiting.get(session_id) ?? new Map<string, Entry>();
      this.#waiting.set(session_id, calls);
      this.#forgetDecided(session_id, event_id);
      calls.set(event_id, {
        approval: {
          call_id: event_id,
          session_id,
          turn_index: request.turn_index,
          round_index: request.round_index,
          event_name: request.event_name,
          arguments: request.arguments,
          requested_at: new Date().toISOString(),
        },
        resolve,
      });
      signal.addEventListener("abort", () => this.#withdraw(session_id, event_id), { once: true });
    });

  /** The calls of a session waiting for a decision, oldest first. */
  list(sessionId: string): PendingApproval[] {
    return [...(this.#waiting.get(sessionId)?.values() ?? [])].map((entry) => entry.approval);
  }

  /** Answers one waiting call; unknown → `ApprovalNotFoundError`, answered → `ApprovalDecidedError`. */
  decide(sessionId: string, callId: string, decision: ApprovalDecision): void {
    const entry = this.#waiting.get(sessionId)?.get(callId);
    if (entry === undefined) {
      if (this.#decided.get(sessionId)?.includes(callId)) throw new ApprovalDecidedError(callId);
      throw new ApprovalNotFoundError(sessionId, callId);
    }
    this.#withdraw(sessionId, callId);
    const decided = this.#decided.get(sessionId) ?? [];
    decided.push(callId);
    this.#decided.set(sessionId, decided.slice(-DECIDED_KEPT));
    entry.resolve(decision);
  }

  #withdraw(sessionId: string, callId: string): void {
    const calls = this.#waiting.get(sessionId);
    calls?.delete(callId);
    if (calls?.size === 0) this.#waiting.delete(sessionId);
  }

  #forgetDecided(sessionId: string, callId: string): void {
    const decided = this.#decided.get(sessionId);
    if (decided?.includes(callId)) {
      this.#decided.set(
        sessionId,
        decided.filter((id) => id !== callId),
      );
    }
  }
}
