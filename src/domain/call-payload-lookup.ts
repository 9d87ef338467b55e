import type { CallPayloadRecord } from "./call-capture.js";
import { AgentLabError } from "./errors.js";
import { redactSecretText } from "./secrets.js";
import type { UsageCallRecord } from "./usage.js";

/**
 * Opening one call's captured payload, the same way from every face (`agent-lab call`, `GET
 * /api/sessions/:id/calls/:metric_key`): the record with its bodies redacted, or an error that says
 * why nothing was kept.
 */

/** The session exists but holds no payload for this metric key. */
export class CallNotCapturedError extends AgentLabError {
  readonly code = "call_not_captured" as const;
  constructor(
    readonly sessionId: string,
    readonly metricKey: string,
    reason: string,
  ) {
    super(`no payload kept for call ${metricKey} of session ${sessionId}: ${reason}`);
  }
}

/** Why a call has no payload, from the session's usage rows: the reader's next step in words. */
export function missingPayloadReason(
  calls: readonly Pick<UsageCallRecord, "metric_key" | "call_kind">[],
  metricKey: string,
): string {
  const call = calls.find((candidate) => candidate.metric_key === metricKey);
  if (call === undefined) {
    return "the session has no call with this metric key (agent-lab usage SESSION --calls lists them)";
  }
  if (call.call_kind === "tool_execution") {
    return "it is a tool execution; only model calls (chat completions, argument fallbacks) are captured";
  }
  return "payload capture was off for this call (the session's capture.payloads is off, or auto with an endpoint that is not on this machine)";
}

/**
 * The payload as a face shows it. The runtime never writes a key into a body (headers are not
 * captured), but a body can quote one (an endpoint echoing a key, a user pasting one): the text
 * shapes of keys are blanked here too, a linear pass over at most two capped bodies.
 */
export function redactedCallPayload(record: CallPayloadRecord): CallPayloadRecord {
  return {
    ...record,
    request_body: redactSecretText(record.request_body),
    response_body: redactSecretText(record.response_body),
  };
}
