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

/** The OTLP encodings the lab sends (OTLP over HTTP; gRPC is not spoken). */
export type TracesProtocol = "http/json" | "http/protobuf";

/**
 * Why the standard variables turn export off although an endpoint is set, or null: the SDK
 * disabled (OTEL_SDK_DISABLED=true), no traces exporter (OTEL_TRACES_EXPORTER=none), or one the lab
 * does not have (anything but otlp), or a protocol it does not speak (grpc). `quiet`: said on
 * purpose, so not warned about.
 */
export function exportRefusal(
  env: TelemetryEnvironment,
): { reason: string; quiet: boolean } | null {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") {
    return { reason: "OTEL_SDK_DISABLED is true", quiet: true };
  }
  const exporters = (set(env.OTEL_TRACES_EXPORTER) ?? "otlp")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  if (exporters.includes("none")) return { reason: "OTEL_TRACES_EXPORTER is none", quiet: true };
  if (!exporters.includes("otlp")) {
    return {
      reason: `OTEL_TRACES_EXPORTER names ${exporters.join(", ")}, and the lab exports over OTLP only (otlp)`,
      quiet: false,
    };
  }
  const protocol = requestedProtocol(env);
  if (protocol !== null && protocol !== "http/json" && protocol !== "http/protobuf") {
    return {
      reason: `the OTLP protocol is ${protocol}, and the lab sends OTLP over HTTP only (http/protobuf or http/json)`,
      quiet: false,
    };
  }
  return null;
}

function requestedProtocol(env: TelemetryEnvironment): string | null {
  const named = set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? set(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  return named?.toLowerCase() ?? null;
}

/**
 * The encoding spans are sent in: the one the variables name, else JSON, which any OTLP/HTTP
 * collector takes and a person can read on the wire (the SDK's own default is protobuf).
 */
export function tracesProtocol(env: TelemetryEnvironment): TracesProtocol {
  return requestedProtocol(env) === "http/protobuf" ? "http/protobuf" : "http/json";
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
