import { ServerResponse } from "node:http";
import { type Context, Hono } from "hono";
import { z } from "zod";
import { ChatCompletionRequest, MODE_HEADER, SESSION_HEADER } from "../../domain/gateway.js";
import { parseInput } from "../../domain/validation.js";
import { SessionId } from "../../store/store-inputs.js";
import { GatewayModelCache } from "../gateway/gateway-model-cache.js";
import { HttpSegment, streamHead } from "../gateway/http-segment.js";
import {
  invalidRequestError,
  openAIError,
  openAIErrorResponse,
  toOpenAIError,
} from "../gateway/openai-error.js";
import { IDEMPOTENCY_HEADER, RETRY_COUNT_HEADER, retryKeyOf } from "../gateway/retry-ledger.js";
import { tappedUpstreamFetch, upstreamFetch } from "../gateway/upstream-fetch.js";
import { resolveGatewayModel } from "../gateway/upstream-resolution.js";
import { readJsonBody } from "../request-body.js";
import { gatewayClientKey, responseHeaders } from "../security.js";
import type { ServerDependencies } from "../server-dependencies.js";

/** Made once: a zod schema built per request was a measurable part of the time to first token. */
const JsonObject = z.record(z.string(), z.unknown());

/**
 * `POST /v1/chat/completions`: any agent that speaks Chat Completions, pointed at the lab, is
 * recorded as sessions (see gateway-sessions.ts). Every refusal is in OpenAI's error format.
 */
export function registerGatewayRoutes(app: Hono, deps: ServerDependencies): void {
  // Made once; kept once known, so each request then starts its segment without a promise's turn.
  const head = everyResponseHeaders().then(streamHead);
  let knownHead: Readonly<Record<string, string>> | null = null;
  void head.then((value) => {
    knownHead = value;
  });
  const models = new GatewayModelCache(upstreamFetch, tappedUpstreamFetch);
  app.post("/v1/chat/completions", async (c) => {
    try {
      const raw = await readJsonBody(c, JsonObject, deps.maxGatewayBodyBytes);
      // Refused as OpenAI refuses a bad body: every offending field named, `param` the first.
      const parsed = ChatCompletionRequest.safeParse(raw);
      if (!parsed.success) {
        return openAIErrorResponse(invalidRequestError(parsed.error, "request body"));
      }
      const body = parsed.data;
      const header = c.req.header(SESSION_HEADER);
      const session_header =
        header === undefined ? null : parseInput(SessionId, headerText(header), SESSION_HEADER);
      const retryKey = retryKeyOf(
        {
          retry_count: c.req.header(RETRY_COUNT_HEADER),
          idempotency_key: c.req.header(IDEMPOTENCY_HEADER),
        },
        raw,
      );
      // Who sent it, for a retry the client does not say is one (retry-ledger.ts).
      const client = `${c.req.header("authorization") ?? ""}\n${c.req.header("user-agent") ?? ""}`;
      const verdict = deps.gateway.retries.check(retryKey, client);
      if (verdict.kind === "pending") {
        return openAIErrorResponse(
          openAIError(
            409,
            "this request's first attempt is still being answered; retry after it ends",
            {
              code: "request_in_progress",
            },
          ),
        );
      }
      if (verdict.kind === "reused_key") {
        return openAIErrorResponse(
          openAIError(
            400,
            "this Idempotency-Key was sent before with another request body; a new request needs a new key",
            { code: "idempotency_key_reused" },
          ),
        );
      }
      if (verdict.kind === "replay") {
        if (verdict.session_id !== null) {
          await deps.store.appendAudit(verdict.session_id, {
            event: "gateway_retry_replayed",
            details: { retry_count: c.req.header(RETRY_COUNT_HEADER) ?? null },
          });
        }
        return verdict.response;
      }
      const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
      /** The session the request went to, once placed. */
      let placed: string | null = null;
      let unanswered: number | null = null;
      const segment = new HttpSegment({
        stream: body.stream === true,
        direct:
          outgoing instanceof ServerResponse
            ? { outgoing, head: knownHead ?? (await head) }
            : undefined,
        include_usage: body.stream_options?.include_usage === true,
        model: body.model,
        report: (error) => deps.reportError("POST /v1/chat/completions", error),
        unanswered: (status) => {
          unanswered = status;
          if (placed !== null) deps.gateway.retries.failed(retryKey, client, status, placed);
        },
      });
      onClientGone(c, outgoing, () => segment.disconnected());
      const session_id = await deps.gateway.handle({
        body,
        raw_body: raw,
        segment,
        session_header,
        ...(verdict.session_id === undefined
          ? {}
          : verdict.said
            ? { retried_session: verdict.session_id }
            : { inferred_retry_of: verdict.session_id }),
        resolved: () => {
          const { labConfig, env } = deps.runTurnDefaults;
          const resolution = resolveGatewayModel(body.model, labConfig ?? null, {
            env: env ?? process.env,
            mode_header: c.req.header(MODE_HEADER),
            client_key: gatewayClientKey(c),
          });
          return { ...resolution, build: () => models.models(resolution) };
        },
      });
      // Once the upstream request is out: the upstream's write waits for every step queued before
      // it, hashing a long conversation's body is not free, and no client retries a request before
      // its first attempt has even been sent.
      setImmediate(() => deps.gateway.retries.remember(retryKey, segment, session_id));
      placed = session_id;
      if (unanswered !== null)
        deps.gateway.retries.failed(retryKey, client, unanswered, session_id);
      return await segment.response;
    } catch (error) {
      return openAIErrorResponse(toOpenAIError(error));
    }
  });
}

/**
 * The client went away before its answer was written whole: the turn it was waiting on stops (the
 * upstream call with it). On node, as Hono's adapter decides it (the response closed unfinished),
 * without the AbortSignal the adapter builds on first use: that cost a measurable part of the
 * lab's time before the upstream call left.
 */
function onClientGone(c: Context, outgoing: unknown, gone: () => void): void {
  if (outgoing instanceof ServerResponse) {
    if (outgoing.closed && !outgoing.writableFinished) gone();
    else outgoing.once("close", () => outgoing.writableFinished || gone());
    return;
  }
  const { signal } = c.req.raw;
  if (signal.aborted) gone();
  else signal.addEventListener("abort", gone, { once: true });
}

/**
 * The headers the lab's middleware puts on every response (nosniff, the CSP…), taken once from
 * the middleware itself, for the streams the gateway writes past Hono (see HttpSegment).
 */
async function everyResponseHeaders(): Promise<Record<string, string>> {
  const probe = new Hono();
  probe.use(responseHeaders());
  probe.get("/", (c) => c.body(null));
  const response = await probe.request("/");
  return Object.fromEntries(response.headers);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as the client wrote it: Node reads a header's bytes one character each (Latin-1),
 * so a UTF-8 name (`café-1`, as curl sends it) arrived as `cafÃ©-1`, and the session could not be
 * found by the name the client used. Bytes that are not UTF-8 are the Latin-1 that fetch and
 * openai-node send for the same name (é as one byte), read as such.
 */
function headerText(value: string): string {
  if (!/[^\x20-\x7e]/.test(value)) return value;
  try {
    return strictUtf8.decode(Buffer.from(value, "latin1"));
  } catch {
    return value;
  }
}
