/**
 * What the standard OpenTelemetry variables say, read without loading the SDK: a lab without
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) never imports it.
 */

export type TelemetryEnvironment = Readonly<Record<string, string | undefined>>;

/** The lab's wait for a collector when OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT is not set. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 3_000;

const set = (value: string | undefined) => (value?.trim() ? value.trim() : null);

/** The traces URL the OTLP/HTTP exporter sends to, as the SDK derives it; null when unset. */
export function tracesUrl(env: TelemetryEnvironment): string | null {
  const traces = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces !== null) return traces;
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (base === null) return null;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

export function telemetryEnabled(env: TelemetryEnvironment): boolean {
  return tracesUrl(env) !== null;
}

/** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: message contents go on the spans. */
export function captureContent(env: TelemetryEnvironment): boolean {
  return set(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)?.toLowerCase() === "true";
}

/** The export timeout: the traces one, else the general one, else the lab's default. */
export function exportTimeoutMs(env: TelemetryEnvironment): number {
  for (const value of [env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, env.OTEL_EXPORTER_OTLP_TIMEOUT]) {
    const parsed = Number(set(value) ?? Number.NaN);
    if (Number.isFinite(parsed) && parsed > 0) return parsed;
  }
  return DEFAULT_EXPORT_TIMEOUT_MS;
}

/**
 * A URL as the lab prints it: scheme, host and path only. Credentials in the user part or the
 * query (some collectors take a key there) never reach a terminal; headers are never printed.
 */
export function redactEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "(an invalid URL)";
  }
}
