import { type CallPayloadRecord, CaptureConfig } from "./call-capture.js";
import { callEndpoint } from "./call-pricing.js";
import { AgentLabError } from "./errors.js";
import { isLoopbackUrl } from "./loopback-url.js";
import type { SessionRecord } from "./records.js";
import { redactSecretText } from "./secrets.js";
import type { AgentRole, UsageCallRecord } from "./usage.js";

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

/** What the reason is read from: the session's stored config and its usage rows. */
export type PayloadLookupSession = Pick<SessionRecord, "id" | "config">;
export type PayloadLookupCall = Pick<
  UsageCallRecord,
  "metric_key" | "call_kind" | "agent" | "finish_reason" | "usage_source"
>;

/**
 * Why a call has no payload, in words that give the reader's next step. A model call without one
 * either was made with capture off, or was never recorded by a lab that captures: a row from a
 * database older than payloads, or a call that came with an imported session (exports carry no
 * payloads). Nothing stored marks an import, so the second case is recognized two ways:
 * - the row itself predates version 3: every call the lab has recorded since has a finish reason,
 *   except a cut one, whose counts are estimated; an old row has neither;
 * - the session's capture setting would have kept this call (on; auto with the simulated model
 *   or a loopback `base_url`; a config written before the setting existed means auto), so a
 *   missing payload was not this lab's choice.
 * What remains is capture off. The one guess here: an auto session whose endpoint came from
 * `$OPENAI_BASE_URL` rather than its config is judged by its config, as not on this machine.
 */
export function missingPayloadReason(
  session: PayloadLookupSession,
  calls: readonly PayloadLookupCall[],
  metricKey: string,
): string {
  const call = calls.find((candidate) => candidate.metric_key === metricKey);
  if (call === undefined) {
    return `the session has no call with this metric key (agent-lab usage ${session.id} lists them in its Calls table, GET /api/sessions/${session.id}/usage/calls pages through them)`;
  }
  if (call.call_kind === "tool_execution") {
    return "it is a tool execution; only model calls (chat completions, argument fallbacks) are captured";
  }
  const predatesVersion3 = call.finish_reason === null && call.usage_source !== "estimated";
  if (predatesVersion3 || captureWouldKeep(session.config, call.agent)) {
    return "this call was recorded before the lab kept payloads (an older database) or came with an imported session (exports carry no payloads)";
  }
  return "payload capture was off for this call (the session's capture.payloads is off, or auto with an endpoint that is not on this machine)";
}

/** Whether the session's capture setting keeps `agent`'s calls, judged from its stored config. */
function captureWouldKeep(config: Record<string, unknown>, agent: AgentRole): boolean {
  const capture = CaptureConfig.safeParse(config.capture ?? {});
  if (!capture.success) return false;
  if (capture.data.payloads !== "auto") return capture.data.payloads === "on";
  const { model, base_url } = callEndpoint(config, agent);
  if (model === "sim" || model.startsWith("sim:")) return true;
  return base_url !== null && isLoopbackUrl(base_url);
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
