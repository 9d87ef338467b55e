import type { Command } from "commander";
import type { CallPayloadRecord } from "../../domain/call-capture.js";
import {
  CallNotCapturedError,
  missingPayloadReason,
  redactedCallPayload,
} from "../../domain/call-payload-lookup.js";
import { SessionNotFoundError } from "../../domain/errors.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import { type CliIo, formatCount, terminalSafe, writeJson } from "../output.js";
import { resolveSession } from "../session-id.js";

export function registerCallCommand(program: Command, context: CommandContext): void {
  program
    .command("call")
    .description(
      "Show one model call as it went over the wire: the request body sent (messages, tools, parameters) and the raw response stream.",
    )
    .argument("<session>", "the session id, or a unique prefix of it (see agent-lab sessions)")
    .argument("<metric-key>", "the call's key, from the call table of agent-lab usage (chat:1:1)")
    .option("--json", "print the captured record: { request_body, response_body, sizes, … }")
    .addHelpText(
      "after",
      `
A call is kept when the session's capture.payloads is on, or auto (the default) with the simulated
model or an endpoint on this machine (a loopback base_url). Each body is kept up to
capture.max_bytes (256 KiB unless set); a cut body says so. Headers are never kept, so no key is;
text shaped like a key in a body is shown as [redacted]. Tool executions have no payload, nor do
calls recorded before the lab kept payloads or imported with their session (exports carry none).

Examples:
  $ agent-lab call 3f1c… chat:1:1
  $ agent-lab call 3f1c… fallback:1:1:call_1 --json | jq -r .request_body | jq .messages`,
    )
    .action(
      async (sessionId: string, metricKey: string, flags: { json?: boolean }, command: Command) => {
        const store = await openStoreForReading(context.database(command));
        if (store === null) throw new SessionNotFoundError(sessionId);
        let payload: CallPayloadRecord | null;
        try {
          const session = await resolveSession(store, sessionId);
          payload = await store.getCallPayload(session.id, metricKey);
          if (payload === null) {
            const { calls } = await store.usageSummary(session.id);
            const reason = missingPayloadReason(session, calls, metricKey);
            throw new CallNotCapturedError(session.id, metricKey, reason);
          }
        } finally {
          await store.close();
        }
        const shown = redactedCallPayload(payload);
        if (flags.json) writeJson(context.io, shown);
        else printCall(context.io, shown);
      },
    );
}

function printCall(io: CliIo, call: CallPayloadRecord): void {
  const head = `Call ${call.metric_key} of session ${call.session_id} · turn ${call.turn_index} · round ${call.round_index} · ${call.agent}`;
  const sections = [
    head,
    "",
    `── request body (${sizeText(call.request_body, call.request_bytes, call.request_truncated)})`,
    prettyJson(call.request_body, call.request_truncated),
    "",
    `── raw response (${sizeText(call.response_body, call.response_bytes, call.response_truncated)})`,
    call.response_body.replace(/\n+$/, ""),
  ];
  // Both bodies hold what models and endpoints wrote: shown, never obeyed by the terminal.
  io.stdout.write(`${terminalSafe(sections.join("\n"))}\n`);
}

function sizeText(kept: string, bytes: number, truncated: boolean): string {
  const size = `${formatCount(bytes)} bytes`;
  if (!truncated) return size;
  const keptBytes = Buffer.byteLength(kept, "utf8");
  return `${size}, CUT: only the first ${formatCount(keptBytes)} bytes were kept (capture.max_bytes)`;
}

/** The body re-indented when it is whole JSON; a cut body is shown as kept, cut mid-token. */
function prettyJson(text: string, truncated: boolean): string {
  if (truncated) return text;
  try {
    return JSON.stringify(JSON.parse(text) as unknown, null, 2);
  } catch {
    return text;
  }
}
