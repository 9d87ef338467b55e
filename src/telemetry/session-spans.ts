import type { SessionStore } from "../store/session-store.js";
import { createOtelPipeline, type ExportStats } from "./otel-pipeline.js";
import { captureContent, type TelemetryEnvironment } from "./telemetry-config.js";
import { emitTurnSpans } from "./turn-spans.js";
import { readSessionRows, turnTraces } from "./turn-trace.js";

/** Spans queued before a flush: well under the batch processor's queue (2,048 by default). */
const FLUSH_EVERY_SPANS = 512;

export interface SessionExportResult {
  turns: number;
  spans: number;
  url: string;
  stats: ExportStats;
  /** False when the collector did not answer within the export timeout. */
  finished: boolean;
}

/**
 * Sends a stored session's turns (every one, whatever its status) as the spans a live export
 * would have sent at the time: same reader, same builder, the recorded times. Null for an unknown
 * session.
 */
export async function exportSessionSpans(
  store: SessionStore,
  sessionId: string,
  env: TelemetryEnvironment,
  version: string,
): Promise<SessionExportResult | null> {
  const content = captureContent(env);
  const rows = await readSessionRows(store, sessionId, { content });
  if (rows === null) return null;
  const pipeline = createOtelPipeline(env, { version, sample_all: true });
  const traces = turnTraces(rows);
  let spans = 0;
  let queued = 0;
  let finished = true;
  for (const trace of traces) {
    const made = emitTurnSpans(pipeline.tracer, trace, { content });
    spans += made;
    queued += made;
    if (queued >= FLUSH_EVERY_SPANS) {
      queued = 0;
      finished = await pipeline.flush();
      if (!finished || pipeline.stats.failed > 0) break;
    }
  }
  finished = (await pipeline.shutdown()) && finished;
  return { turns: traces.length, spans, url: pipeline.url, stats: pipeline.stats, finished };
}
