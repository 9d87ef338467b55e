import type { Context, MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import {
  bearerToken,
  cookieToken,
  type TokenCheck,
  tokenCheck,
  withoutTokenParameter,
} from "./access-token.js";
import {
  fromLabErrorBody,
  invalidApiKeyError,
  LabErrorBody,
  openAIError,
  openAIErrorResponse,
} from "./gateway/openai-error.js";
import { ForbiddenError, UnauthorizedError, UnsupportedMediaTypeError } from "./http-errors.js";

/**
 * The server's guards (DESIGN.md, "Promises under faults": the server binds 127.0.0.1 and needs a
 * token unless started with --no-token on loopback; foreign Host and Origin are refused).
 *
 * - Host: a page on evil.example whose name is re-pointed at 127.0.0.1 (DNS rebinding) reaches
 *   this server with `Host: evil.example`, so only the bound address and the loopback names pass.
 * - Origin: a state-changing request from another site's page is refused, even a "simple" one.
 * - Token: with a token every /api request (health included) carries `Authorization: Bearer
 *   TOKEN` or the token cookie, compared in constant time. A page address with `?token=TOKEN`
 *   sets the cookie and redirects to itself without the token (out of the address bar and the
 *   history). The UI's files hold no data and load without it, so a browser without the cookie
 *   gets the UI's "needs its token" page rather than a bare 401.
 * - Bodies: JSON only (415); their size is checked where they are read (request-body.ts, 413).
 * - The gateway (`/v1`) follows the same rules, in the clients' terms: the token is the API key an
 *   OpenAI client sends (`Authorization: Bearer TOKEN`), or `X-Agent-Lab-Token: TOKEN` when the
 *   API key is an upstream's own (`pass_client_key`); no cookie and no `?token=` exchange (no
 *   browser page lives there); every refusal and error is in OpenAI's format.
 */

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/** `Host` header values (lower case, with the port) the server answers to. */
export type AllowedHosts = readonly string[] | (() => readonly string[]);

export interface GuardOptions {
  /** Default: the loopback names on any port (for an app not bound to a known port). */
  allowedHosts?: AllowedHosts | undefined;
  token?: string | undefined;
}

export function isApiPath(path: string): boolean {
  return path === "/api" || path.startsWith("/api/");
}

/** The OpenAI-compatible gateway: `/v1/chat/completions`, `/v1/models`. */
export function isGatewayPath(path: string): boolean {
  return path === "/v1" || path.startsWith("/v1/");
}

/** The lab token for a gateway request whose `Authorization` carries an upstream key. */
export const TOKEN_HEADER = "x-agent-lab-token";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by the guards on `/v1` requests: see gatewayClientKey. */
    gatewayClientKey: string | null;
  }
}

/**
 * The client's own key on a `/v1` request: its `Authorization: Bearer KEY` when that is not the
 * lab's token (the guards decide), else null. Only a `pass_client_key` upstream may use it.
 */
export function gatewayClientKey(c: Context): string | null {
  return c.get("gatewayClientKey") ?? null;
}

/** The name part of a Host value: `[::1]:80` → `[::1]`, `localhost:4173` → `localhost`. */
function hostName(host: string): string {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const colon = host.indexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

function hostAllowed(host: string, allowed: AllowedHosts | undefined): boolean {
  if (allowed === undefined) return LOOPBACK_NAMES.has(hostName(host));
  const list = typeof allowed === "function" ? allowed() : allowed;
  return list.includes(host);
}

export function requestGuards(options: GuardOptions): MiddlewareHandler {
  const check = options.token === undefined ? null : tokenCheck(options.token);
  const guardLab = labGuards(options, check);
  const guardGateway = gatewayGuards(options, check);
  return (c, next) => (isGatewayPath(c.req.path) ? guardGateway(c, next) : guardLab(c, next));
}

function labGuards(options: GuardOptions, check: TokenCheck | null): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host")?.toLowerCase();
    if (host === undefined || !hostAllowed(host, options.allowedHosts)) {
      throw new ForbiddenError(
        "this server only answers to its own address (the Host header names another)",
      );
    }
    const method = c.req.method;
    if (STATE_CHANGING.has(method)) {
      const origin = c.req.header("origin");
      // Browsers send Origin on every state-changing request; tools like curl send none.
      if (origin !== undefined && origin.toLowerCase() !== `http://${host}`) {
        throw new ForbiddenError("cross-origin requests that change data are refused");
      }
    }
    const api = isApiPath(c.req.path);
    if (check !== null && !api && (method === "GET" || method === "HEAD")) {
      // A wrong token is not exchanged: the page loads with it still in the address, and the UI
      // says it was refused.
      if (check.matches(c.req.query("token"))) {
        return c.body(null, 302, {
          Location: withoutTokenParameter(c.req.url),
          "Set-Cookie": check.cookie(host),
          "Cache-Control": "no-store",
        });
      }
    }
    if (api) {
      if (check !== null) {
        if (!check.matches(bearerToken(c)) && !check.matches(cookieToken(c, host))) {
          c.header("WWW-Authenticate", 'Bearer realm="agent-lab"');
          throw new UnauthorizedError();
        }
      }
      if (WITH_BODY.has(method)) {
        const type = c.req.header("content-type");
        const media = type?.split(";")[0]?.trim().toLowerCase();
        if (media !== "application/json") throw new UnsupportedMediaTypeError(type);
      }
    }
    await next();
  };
}

function bodyTypeAccepted(c: Context): string | undefined | true {
  if (!WITH_BODY.has(c.req.method)) return true;
  const type = c.req.header("content-type");
  const media = type?.split(";")[0]?.trim().toLowerCase();
  return media === "application/json" ? true : type;
}

/** The same checks as `/api`'s, answered the way OpenAI's clients read errors. */
function gatewayGuards(options: GuardOptions, check: TokenCheck | null): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host")?.toLowerCase();
    if (host === undefined || !hostAllowed(host, options.allowedHosts)) {
      return openAIErrorResponse(
        openAIError(
          403,
          "this server only answers to its own address (the Host header names another)",
          { code: "forbidden" },
        ),
      );
    }
    const origin = c.req.header("origin");
    if (STATE_CHANGING.has(c.req.method) && origin !== undefined) {
      if (origin.toLowerCase() !== `http://${host}`) {
        return openAIErrorResponse(
          openAIError(403, "cross-origin requests that change data are refused", {
            code: "forbidden",
          }),
        );
      }
    }
    const bearer = bearerToken(c);
    if (check !== null) {
      const bearerIsToken = check.matches(bearer);
      if (!bearerIsToken && !check.matches(c.req.header(TOKEN_HEADER))) {
        const response = openAIErrorResponse(invalidApiKeyError());
        response.headers.set("WWW-Authenticate", 'Bearer realm="agent-lab"');
        return response;
      }
      c.set("gatewayClientKey", bearerIsToken ? null : (bearer ?? null));
    } else {
      c.set("gatewayClientKey", bearer ?? null);
    }
    const type = bodyTypeAccepted(c);
    if (type !== true) {
      const refusal = new UnsupportedMediaTypeError(type);
      return openAIErrorResponse(openAIError(415, refusal.message, { code: refusal.code }));
    }
    await next();
    await rewriteLabError(c);
  };
}

/**
 * The lab's shared handlers (an unknown route, a body too large, an unexpected failure) answer in
 * the lab's error shape; a `/v1` client expects OpenAI's. Only error responses are read, and only
 * a body that is exactly the lab's shape is rewritten: a route's own OpenAI errors pass as sent.
 */
async function rewriteLabError(c: Context): Promise<void> {
  const response = c.res;
  if (response.status < 400 || !response.headers.get("content-type")?.includes("json")) return;
  let value: unknown;
  try {
    value = JSON.parse(await response.clone().text());
  } catch {
    return;
  }
  const parsed = LabErrorBody.safeParse(value);
  if (!parsed.success) return;
  const error = fromLabErrorBody(response.status as ContentfulStatusCode, parsed.data);
  // Hono carries the other headers (security headers, WWW-Authenticate) over to the new response.
  c.res = openAIErrorResponse(error);
}

/** Headers on every response; the policy lets the built UI run and nothing else. */
export function responseHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      imgSrc: ["'self'", "data:"],
      connectSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      frameAncestors: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
    },
    xFrameOptions: "DENY",
    // Plain HTTP on a local address: HSTS would pin every app on localhost to HTTPS.
    strictTransportSecurity: false,
    crossOriginEmbedderPolicy: false,
  });
}
