import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { IncomingBody } from "./incoming-body.js";

/**
 * The gateway's `fetch` for its upstreams, on node:http rather than undici's fetch. Measured on
 * 127.0.0.1 (Node 20), a streamed POST's round trip to the response head costs about 1.3 ms through
 * fetch and 0.5 ms through node:http: fetch's own machinery is most of a local call, and the
 * gateway pays for a second call on top of its client's. Only what the OpenAI adapter uses is
 * provided: a POST with a string body, status, headers, a body stream that the caller reads or
 * cancels, and an abort signal that stops the request or the body read with its own reason (a
 * client that disconnects closes the upstream connection). Connections are kept alive, as fetch
 * keeps them. Redirects are not followed (an OpenAI endpoint does not redirect a POST): a 3xx
 * reaches the adapter as the endpoint's error status. No `Accept-Encoding` is sent, so the bytes
 * come uncompressed and pass through as the endpoint wrote them. A tapped fetch (pass-through's
 * first call) also hands each read of a 2xx body to a tap the moment it arrives.
 */
const agents = {
  "http:": new http.Agent({ keepAlive: true }),
  "https:": new https.Agent({ keepAlive: true }),
};

/** Where a request goes, as node:http takes it. */
interface Target {
  protocol: string;
  hostname: string;
  port: string;
  path: string;
  /** `user:password` from the URL, as node:http sends it (Basic). */
  auth: string | undefined;
}

/**
 * Upstream URLs parsed once: a gateway calls the same few endpoints, and a URL parsed and
 * converted for every call was a measurable part of the lab's time before the upstream call
 * left (bounded: a client may name any `openai:MODEL`, but not any URL).
 */
const targets = new Map<string, Target>();
const MAX_TARGETS = 64;

function targetOf(address: string): Target {
  const kept = targets.get(address);
  if (kept !== undefined) return kept;
  const url = new URL(address);
  const target = {
    protocol: url.protocol,
    // node:http wants an IPv6 literal without its brackets.
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    auth:
      url.username || url.password
        ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
        : undefined,
  };
  if (targets.size >= MAX_TARGETS) targets.clear();
  targets.set(address, target);
  return target;
}

/**
 * The request's headers as a record with lower-case names. The OpenAI adapter hands a plain
 * record, copied as it is (a Headers object built and walked for it cost more than the rest of
 * the request's setup); anything else goes through Headers, which normalizes it as fetch does.
 */
function headerRecord(init: RequestInit["headers"]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (init === undefined || init === null) return headers;
  if (!(init instanceof Headers) && !Array.isArray(init) && isPlainRecord(init)) {
    for (const name of Object.keys(init)) {
      const value = init[name];
      if (typeof value !== "string") return headerRecordOf(init);
      const key = name.toLowerCase();
      const trimmed = trimHttpWhitespace(value);
      headers[key] = key in headers ? `${headers[key]}, ${trimmed}` : trimmed;
    }
    return headers;
  }
  return headerRecordOf(init);
}

function headerRecordOf(init: NonNullable<RequestInit["headers"]>): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init).forEach((value, key) => {
    headers[key] = value;
  });
  return headers;
}

function isPlainRecord(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Fetch strips a value's leading and trailing tabs, spaces, CRs and LFs. */
function trimHttpWhitespace(value: string): string {
  const edge = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
  if (
    value.length === 0 ||
    (!edge(value.charCodeAt(0)) && !edge(value.charCodeAt(value.length - 1)))
  )
    return value;
  return value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
}

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * Told of a successful (2xx) response's body reads the moment they arrive, before the caller
 * reads them through the Response: pass-through hands them to its client without waiting for the
 * adapter's read loop. The caller still gets every read, in order.
 */
export interface UpstreamTap {
  bytes(piece: Uint8Array): void;
}

export const upstreamFetch: typeof globalThis.fetch = (input, init) => send(input, init, null);

/** A fetch made for one call, telling `tap` of each read of a 2xx response's body. */
export type TappedFetch = (tap: UpstreamTap) => typeof globalThis.fetch;

/** The same fetch, telling `tap` of each read of a 2xx response's body as it arrives. */
export const tappedUpstreamFetch: TappedFetch = (tap) => (input, init) => send(input, init, tap);

function send(
  input: Parameters<typeof globalThis.fetch>[0],
  init: RequestInit = {},
  tap: UpstreamTap | null,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const target = targetOf(input instanceof Request ? input.url : String(input));
    const signal = init.signal ?? null;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      reject(new TypeError("fetch failed", { cause: new Error(`unsupported ${target.protocol}`) }));
      return;
    }
    const body = typeof init.body === "string" ? init.body : "";
    const headers = headerRecord(init.headers);
    headers["content-length"] = String(Buffer.byteLength(body));
    const https_ = target.protocol === "https:";
    const request = (https_ ? https : http).request({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      ...(target.auth === undefined ? {} : { auth: target.auth }),
      method: init.method ?? "GET",
      headers,
      agent: https_ ? agents["https:"] : agents["http:"],
    });
    let response: IncomingMessage | null = null;
    let incomingBody: IncomingBody | null = null;
    let settled = false;
    const onAbort = () => {
      const reason = signal?.reason;
      request.destroy();
      response?.destroy();
      if (!settled) reject(reason);
      settled = true;
      // Stopped by the caller: whatever was queued is not wanted.
      incomingBody?.fail(reason, { drained: false });
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      signal?.removeEventListener("abort", onAbort);
    };
    request.on("error", (error) => {
      if (signal?.aborted) return;
      const failure = new TypeError(settled ? "terminated" : "fetch failed", { cause: error });
      if (!settled) reject(failure);
      settled = true;
      incomingBody?.fail(failure);
      done();
    });
    request.once("response", (incoming) => {
      response = incoming;
      settled = true;
      const status = incoming.statusCode ?? 0;
      const respond = (stream: ReadableStream<Uint8Array> | null) => {
        const responseHeaders = new Headers();
        const raw = incoming.rawHeaders;
        for (let index = 0; index + 1 < raw.length; index += 2) {
          responseHeaders.append(raw[index] as string, raw[index + 1] as string);
        }
        resolve(
          new Response(stream, {
            status,
            statusText: incoming.statusMessage ?? "",
            headers: responseHeaders,
          }),
        );
      };
      if (NULL_BODY.has(status)) {
        incoming.resume();
        done();
        respond(null);
        return;
      }
      const tapped = tap !== null && status >= 200 && status < 300 ? tap : null;
      const stream = new IncomingBody(
        incoming,
        request,
        tapped,
        () => signal?.aborted === true,
        done,
      );
      incomingBody = stream;
      if (tapped === null) {
        respond(stream.stream());
        return;
      }
      // The Response (its headers, its body stream) is built once the reads already here went to
      // the tap: building it first was a tenth of a millisecond before the client's first bytes.
      queueMicrotask(() => respond(stream.stream()));
    });
    request.end(body);
  });
}
