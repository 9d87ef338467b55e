import { exportRefusal, type TelemetryEnvironment, tracesUrl } from "./telemetry-config.js";

/** A running export: where it goes, what went, and its end (a bounded flush). */
export interface TelemetryHandle {
  readonly url: string;
  readonly stats: { exported: number; failed: number; error: string | null };
  /** Sends what is queued and stops, waiting at most the export timeout; never throws. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting every turn of this process over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; otherwise null, and the SDK is never loaded. A
 * configuration the SDK refuses is one warning line, and the lab runs without export.
 */
export async function startTelemetry(
  env: TelemetryEnvironment,
  options: { version: string; warn: (line: string) => void },
): Promise<TelemetryHandle | null> {
  if (tracesUrl(env) === null) return null;
  const refused = exportRefusal(env);
  if (refused !== null) {
    if (!refused.quiet)
      options.warn(`agent-lab: warning: OpenTelemetry export is off: ${refused.reason}\n`);
    return null;
  }
  try {
    const { startLiveExport } = await import("./live-export.js");
    return startLiveExport(env, options);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    options.warn(`agent-lab: warning: OpenTelemetry export is off: ${reason}\n`);
    return null;
  }
}
