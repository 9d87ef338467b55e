import type { Tracer } from "@opentelemetry/api";
import { redactSecretText } from "../domain/secrets.js";
import { observeTurns, type TurnObserver } from "../runtime/turn-observers.js";
import { createOtelPipeline } from "./otel-pipeline.js";
import type { TelemetryHandle } from "./start-telemetry.js";
import { captureContent, type TelemetryEnvironment } from "./telemetry-config.js";
import { readTurnRows } from "./turn-rows.js";
import { emitTurnSpans, type SpanOptions } from "./turn-spans.js";
import { turnTraces } from "./turn-trace.js";

/**
 * Every turn this process runs, exported as it ends: the runtime tells the observer, which reads
 * the turn back from its store (the recorded times and figures, the same as `export-otel` sends)
 * and hands its spans to the SDK's batch processor; the network is the processor's business, off
 * the turn's path. A collector that fails costs one warning line, once.
 */
/** Reads each ended turn back from its store and starts and ends its spans on `tracer`. */
export function spansObserver(tracer: Tracer, options: SpanOptions): TurnObserver {
  return {
    async turnEnded({ store, session_id, turn_index }) {
      const rows = await readTurnRows(store, session_id, turn_index, options);
      if (rows === null) return;
      for (const trace of turnTraces(rows, turn_index)) emitTurnSpans(tracer, trace, options);
    },
  };
}

export function startLiveExport(
  env: TelemetryEnvironment,
  options: { version: string; warn: (line: string) => void },
): TelemetryHandle {
  const content = captureContent(env);
  let warned = false;
  const warn = (reason: string) => {
    if (warned) return;
    warned = true;
    options.warn(
      `agent-lab: warning: OpenTelemetry export to ${pipeline.url} failed: ${redactSecretText(reason)} (the lab's own records are unaffected)\n`,
    );
  };
  const pipeline = createOtelPipeline(env, { version: options.version, onFailure: warn });
  const stop = observeTurns(spansObserver(pipeline.tracer, { content }));
  return {
    url: pipeline.url,
    stats: pipeline.stats,
    async shutdown() {
      stop();
      const finished = await pipeline.shutdown();
      if (!finished) warn(`no answer within ${pipeline.budget_ms} ms`);
    },
  };
}
