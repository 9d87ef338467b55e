import http, { type IncomingMessage } from "node:http";
import https from "node:https";

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
    let body_: IncomingBody | null = null;
    let settled = false;
    const onAbort = () => {
      const reason = signal?.reason;
      request.destroy();
      response?.destroy();
      if (!settled) reject(reason);
      settled = true;
      // Stopped by the caller: whatever was queued is not wanted.
      body_?.fail(reason, { drained: false });
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
      body_?.fail(failure);
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
      body_ = new IncomingBody(incoming, request, tapped, () => signal?.aborted === true, done);
      const stream = body_;
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

/**
 * A response's body as a ReadableStream, listened to from the moment the head arrived: reads
 * (and the end, or a failure) that come before the stream is made wait for it. A connection lost
 * mid-body fails the stream only once the reads already queued are read: a tap has passed them
 * on, so the caller must get them too (erroring a stream drops what it holds).
 */
class IncomingBody {
  #controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  #pending: Buffer[] = [];
  /** How the body ended before the stream was made: null (it goes on), true (its end), or why. */
  #over: { error: unknown; drained: boolean } | true | null = null;
  /** A failure held until the queued reads are read. */
  #cut: { error: unknown } | null = null;
  #closed = false;

  constructor(
    readonly incoming: IncomingMessage,
    readonly request: http.ClientRequest,
    tap: UpstreamTap | null,
    aborted: () => boolean,
    readonly done: () => void,
  ) {
    incoming.on("data", (piece: Buffer) => {
      if (this.#closed) return;
      tap?.bytes(piece);
      const stream = this.#controller;
      if (stream === null) {
        this.#pending.push(piece);
        return;
      }
      stream.enqueue(piece);
      // Backpressure, as fetch has it: a reader that stops reading stops the socket.
      if ((stream.desiredSize ?? 1) <= 0) incoming.pause();
    });
    incoming.once("end", () => {
      if (this.#closed) return;
      if (this.#controller === null) this.#over = true;
      else this.#controller.close();
      this.#closed = true;
      done();
    });
    // A connection lost mid-body: Node says so with an error, then a close.
    incoming.on("error", (error) => {
      if (aborted()) return;
      this.fail(new TypeError("terminated", { cause: error }));
    });
    incoming.once("close", () => {
      // Closed before its end: the connection was lost mid-body (undici says "terminated").
      if (incoming.complete) return;
      this.fail(new TypeError("terminated", { cause: new Error("other side closed") }));
    });
  }

  /**
   * The body fails with `error` (nothing more is read), unless it is over already: after the
   * queued reads (`drained`, a lost connection), or at once (the caller stopped it).
   */
  fail(error: unknown, { drained = true }: { drained?: boolean } = {}): void {
    if (this.#closed) return;
    this.#closed = true;
    const controller = this.#controller;
    if (controller === null) this.#over = { error, drained };
    // Nothing queued (the default high-water mark is one read): no read to wait for.
    else if (drained && (controller.desiredSize ?? 1) < 1) this.#cut = { error };
    else controller.error(error);
    this.done();
  }

  stream(): ReadableStream<Uint8Array> {
    const { incoming, request } = this;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        const queued = this.#pending.length > 0;
        for (const piece of this.#pending) controller.enqueue(piece);
        this.#pending = [];
        const over = this.#over;
        if (over === true) controller.close();
        else if (over !== null && !(over.drained && queued)) controller.error(over.error);
        else {
          this.#controller = controller;
          if (over !== null) this.#cut = { error: over.error };
          if ((controller.desiredSize ?? 1) <= 0) incoming.pause();
        }
      },
      pull: (controller) => {
        // Called once the queue is empty: the held failure is the next thing read.
        if (this.#cut !== null) controller.error(this.#cut.error);
        else incoming.resume();
      },
      cancel: () => {
        this.#closed = true;
        this.#controller = null;
        this.#cut = null;
        this.done();
        // All of it arrived (the reader stopped at `[DONE]`): the connection serves the next call.
        if (incoming.complete) {
          incoming.resume();
          return;
        }
        // Left unread: the connection cannot serve another request.
        incoming.destroy();
        request.destroy();
      },
    });
  }
}
