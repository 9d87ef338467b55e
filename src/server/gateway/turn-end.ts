import { AgentLabError } from "../../domain/errors.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import type { GatewaySegment, SegmentFinish } from "./gateway-segment.js";

/**
 * A turn that ended without an upstream failure to report: cancelled (the lab is stopping: 503),
 * failed because the database refused it (503 `storage_failed`, as the API answers: the database's
 * trouble, named, not a bug to log), or failed in the lab (500, and logged).
 */
export class GatewayTurnEnded extends AgentLabError {
  readonly code: "turn_cancelled" | "turn_failed" | "storage_failed";
  constructor(status: "cancelled" | "failed", reason: string, storage = false) {
    super(`the turn ended ${status}: ${reason}`);
    this.code =
      status === "cancelled" ? "turn_cancelled" : storage ? "storage_failed" : "turn_failed";
  }
}

/** What the turn saw before its end that the client's last segment may have to say. */
export interface TurnOutcome {
  /** How the chat agent's last round ended, as its endpoint said. */
  lastFinish: string | null;
  /** The last failure of the chat model's calls, else the event model's (null: none). */
  upstreamError: unknown;
  /** The turn's `error` event, for a failure no upstream explains. */
  failure: { code: string; message: string } | null;
}

/** The turn ended: its current segment ends as the turn did, unless the client has its answer. */
export function endSegment(
  segment: GatewaySegment,
  event: Extract<TurnEvent, { type: "turn_end" }>,
  outcome: TurnOutcome,
): void {
  // Ended already: the client has its answer. A turn the lab failed to record after that is
  // for the segment to report (HttpSegment.fail logs it when the answer went out whole).
  if (segment.ended && event.status !== "failed") return;
  if (event.status === "completed" || event.status === "max_rounds") {
    // A forwarding segment ended with the upstream's own last bytes.
    if (!segment.forwardsBytes) {
      segment.finish(
        event.status === "completed" ? answerFinish(outcome.lastFinish) : "length",
        [],
      );
    }
    return;
  }
  segment.fail(
    outcome.upstreamError ??
      new GatewayTurnEnded(
        event.status,
        outcome.failure?.message ?? "no reason given",
        outcome.failure?.code === "storage_failed",
      ),
  );
}

/**
 * A completed turn's answer ends as its last model call did, when that says something a client
 * acts on: cut at its token limit (`length`), or filtered (`content_filter`). Else `stop`.
 */
function answerFinish(reason: string | null): SegmentFinish {
  return reason === "length" || reason === "content_filter" ? reason : "stop";
}
