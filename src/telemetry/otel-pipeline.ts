import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { redactSecretText } from "../domain/secrets.js";
import {
  exportTimeoutMs,
  redactEndpoint,
  type TelemetryEnvironment,
  tracesProtocol,
  tracesUrl,
} from "./telemetry-config.js";

type ExportCallback = Parameters<SpanExporter["export"]>[1];

/** What went out: spans the collector took, spans that failed, and the first failure's reason. */
export interface ExportStats {
  exported: number;
  failed: number;
  error: string | null;
}

/** Counts what the OTLP exporter really delivered (the SDK reports it only to its callback). */
class CountingExporter implements SpanExporter {
  readonly stats: ExportStats = { exported: 0, failed: 0, error: null };

  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: (reason: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: ExportCallback): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core).
      if (result.code === 0) this.stats.exported += spans.length;
      else {
        this.stats.failed += spans.length;
        const reason = redactSecretText(result.error?.message || "the collector refused the spans");
        this.stats.error ??= reason;
        this.onFailure(reason);
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The SDK's pipeline: a tracer whose spans go, batched, to the OTLP/HTTP endpoint. */
export interface OtelPipeline {
  readonly tracer: Tracer;
  /** Where the spans go, with any credentials cut out of the URL. */
  readonly url: string;
  readonly stats: ExportStats;
  /** Sends what is queued; false when `budget_ms` ran out first. */
  flush(budget_ms?: number): Promise<boolean>;
  /** Flushes and closes, waiting at most `budget_ms`; false when it ran out first. */
  shutdown(budget_ms?: number): Promise<boolean>;
  /** The bound every wait of this pipeline has: the export timeout (telemetry-config.ts). */
  readonly budget_ms: number;
}

/**
 * Builds the pipeline from the standard variables, all read by the SDK itself (endpoint, headers,
 * timeout, compression, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, attribute limits).
 * The only value the lab chooses is the export timeout when none is set: 3 s instead of the SDK's
 * 10 s, so a command never waits long at its end for a collector that is down.
 */
export function createOtelPipeline(
  env: TelemetryEnvironment,
  options: {
    version: string;
    onFailure?: (reason: string) => void;
    /**
     * Every span, whatever OTEL_TRACES_SAMPLER says: `export-otel` names the session to send,
     * and a sampler that dropped its spans read as a collector that never answered.
     */
    sample_all?: boolean;
  },
): OtelPipeline {
  // The SDK sends to its default (http://localhost:4318) when the variable is not an http(s) URL
  // with a host (`not-a-url`, `http://`): spans would go where nobody said, so export is off.
  const given = [env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, env.OTEL_EXPORTER_OTLP_ENDPOINT]
    .map((value) => value?.trim())
    .find((value) => value);
  if (given !== undefined && !isCollectorUrl(given)) {
    throw new Error(
      "OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is not a URL; set it to the collector's, such as http://127.0.0.1:4318",
    );
  }
  // The SDK appends /v1/traces to the base endpoint as text: after a query string it lands in the
  // query, and spans go to a path no collector serves while the lab would show the host's root.
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() && base && /[?#]/.test(base)) {
    throw new Error(
      "OTEL_EXPORTER_OTLP_ENDPOINT has a query string, after which the exporter would append /v1/traces; give the collector's base URL alone (a key goes in OTEL_EXPORTER_OTLP_HEADERS), or the whole traces URL in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, which is used as it is",
    );
  }
  const budget_ms = exportTimeoutMs(env);
  const exporter = new CountingExporter(
    new (tracesProtocol(env) === "http/protobuf" ? ProtobufTraceExporter : OTLPTraceExporter)(
      hasTimeout(env) ? {} : { timeoutMillis: budget_ms },
    ),
    options.onFailure ?? (() => {}),
  );
  const processor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({
    // The service is agent-lab unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say otherwise.
    resource: defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: "agent-lab" }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [processor],
    // Otherwise the SDK's own choice, from OTEL_TRACES_SAMPLER (live export follows it).
    ...(options.sample_all ? { sampler: new AlwaysOnSampler() } : {}),
  });
  const bounded = async (work: Promise<unknown>, budget: number) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), budget);
      timer.unref();
    });
    try {
      return await Promise.race([
        work.then(
          () => true,
          () => true,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    tracer: provider.getTracer("agent-lab", options.version),
    url: redactEndpoint(tracesUrl(env) ?? ""),
    stats: exporter.stats,
    budget_ms,
    flush: (budget = budget_ms) => bounded(provider.forceFlush(), budget),
    shutdown: (budget = budget_ms) => bounded(provider.shutdown(), budget),
  };
}

function hasTimeout(env: TelemetryEnvironment): boolean {
  return Boolean(
    env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?.trim() || env.OTEL_EXPORTER_OTLP_TIMEOUT?.trim(),
  );
}

function isCollectorUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
}
