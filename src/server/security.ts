import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { bearerToken, cookieToken, tokenCheck, withoutTokenParameter } from "./access-token.js";
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
