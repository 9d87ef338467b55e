import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

/**
 * A local OTLP/HTTP traces receiver on 127.0.0.1: it decodes what arrives at /v1/traces (the
 * OTLP/HTTP exporter sends OTLP's JSON encoding) into plain spans tests can assert on.
 */

const AnyValue: z.ZodType<unknown> = z.lazy(() =>
  z.union([
    z.object({ stringValue: z.string() }).transform((value) => value.stringValue),
    z.object({ boolValue: z.boolean() }).transform((value) => value.boolValue),
    z
      .object({ intValue: z.union([z.string(), z.number()]) })
      .transform((value) => Number(value.intValue)),
    z.object({ doubleValue: z.number() }).transform((value) => value.doubleValue),
    z
      .object({ arrayValue: z.object({ values: z.array(AnyValue).default([]) }) })
      .transform((value) => value.arrayValue.values),
  ]),
);
const KeyValues = z
  .array(z.object({ key: z.string(), value: AnyValue }))
  .default([])
  .transform((pairs) => Object.fromEntries(pairs.map((pair) => [pair.key, pair.value])));
const Nanos = z
  .union([z.string(), z.number()])
  .transform((value) => Number(BigInt(value) / 1000n) / 1000);

const Span = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number(),
  startTimeUnixNano: Nanos,
  endTimeUnixNano: Nanos,
  attributes: KeyValues,
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
});
const ExportRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: KeyValues }).optional(),
      scopeSpans: z.array(
        z.object({ scope: z.object({ name: z.string() }).optional(), spans: z.array(Span) }),
      ),
    }),
  ),
});

export interface ReceivedSpan {
  trace_id: string;
  span_id: string;
  /** Empty for a root span. */
  parent_span_id: string;
  name: string;
  kind: number;
  /** Epoch milliseconds (with the nanoseconds' fraction). */
  start_ms: number;
  end_ms: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status_code: number;
  resource: Record<string, unknown>;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly headers: IncomingHttpHeaders[] = [];
  /** The bodies of requests sent as OTLP's protobuf encoding (http/protobuf), undecoded. */
  readonly protobuf: Buffer[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on("request", (request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        if (request.url !== "/v1/traces" || request.method !== "POST") {
          response.writeHead(404).end();
          return;
        }
        const type = String(request.headers["content-type"]);
        if (type.startsWith("application/x-protobuf")) {
          // Kept as bytes: a test asks what they hold (protobuf keeps strings as they are).
          receiver.protobuf.push(Buffer.concat(chunks));
          response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
          return;
        }
        if (!type.startsWith("application/json")) {
          response.writeHead(415).end();
          return;
        }
        receiver.headers.push(request.headers);
        const body = ExportRequest.parse(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        for (const resourceSpans of body.resourceSpans) {
          const resource = resourceSpans.resource?.attributes ?? {};
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans) {
              receiver.spans.push({
                trace_id: span.traceId,
                span_id: span.spanId,
                parent_span_id: span.parentSpanId ?? "",
                name: span.name,
                kind: span.kind,
                start_ms: span.startTimeUnixNano,
                end_ms: span.endTimeUnixNano,
                attributes: span.attributes,
                status_code: span.status?.code ?? 0,
                resource,
              });
            }
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
