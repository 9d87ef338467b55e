import type { Command } from "commander";
import { InvalidInputError, SessionNotFoundError } from "../../domain/errors.js";
import { exportRefusal, tracesUrl } from "../../telemetry/telemetry-config.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import { terminalSafe } from "../output.js";
import { resolveSession } from "../session-id.js";

export function registerExportOtelCommand(
  program: Command,
  context: CommandContext,
  version: string,
): void {
  program
    .command("export-otel")
    .description(
      "Send a past session (all its turns) as OpenTelemetry GenAI spans over OTLP/HTTP, to the collector OTEL_EXPORTER_OTLP_ENDPOINT names: the same spans a live export sends.",
    )
    .argument("<session>", "the session id, or a unique prefix of it (see agent-lab sessions)")
    .addHelpText(
      "after",
      `
The standard variables configure it: OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_TIMEOUT (default here 3000 ms). Message contents are
sent only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

Examples:
  $ OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 agent-lab export-otel 3f1c
  $ OTEL_EXPORTER_OTLP_ENDPOINT=https://cloud.langfuse.com/api/public/otel \\
    OTEL_EXPORTER_OTLP_HEADERS="Authorization=Basic $(printf %s "$LANGFUSE_PUBLIC_KEY:$LANGFUSE_SECRET_KEY" | base64 -w0),x-langfuse-ingestion-version=4" \\
    agent-lab export-otel 3f1c`,
    )
    .action(async (sessionId: string, _flags: unknown, command: Command) => {
      const { io } = context;
      if (tracesUrl(io.env) === null) {
        throw new InvalidInputError(
          "export-otel needs a collector: set OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), e.g. http://127.0.0.1:4318",
        );
      }
      // Asked for by name, so refused by name: the variables say not to export, or not so.
      const refused = exportRefusal(io.env);
      if (refused !== null) {
        throw new InvalidInputError(`export-otel sends nothing: ${refused.reason}`);
      }
      const store = await openStoreForReading(context.database(command));
      if (store === null) throw new SessionNotFoundError(sessionId);
      try {
        const session = await resolveSession(store, sessionId);
        const { exportSessionSpans } = await import("../../telemetry/session-spans.js");
        const result = await exportSessionSpans(store, session.id, io.env, version);
        if (result === null) throw new SessionNotFoundError(sessionId);
        const { stats, url } = result;
        const turns = `${result.turns} turn${result.turns === 1 ? "" : "s"}`;
        if (stats.failed === 0 && result.finished && stats.exported === result.spans) {
          io.stdout.write(
            `sent ${result.spans} spans (${turns} of session ${terminalSafe(session.id)}) to ${url}\n`,
          );
          return;
        }
        const reason = stats.error ?? `no answer within the export timeout`;
        io.stderr.write(
          `agent-lab: export-otel: ${stats.exported} of ${result.spans} spans (${turns}) reached ${url}; the rest failed: ${terminalSafe(reason)}\n`,
        );
        context.exitCode = 1;
      } finally {
        await store.close();
      }
    });
}
