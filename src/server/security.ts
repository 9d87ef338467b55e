import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { ForbiddenError, UnauthorizedError, UnsupportedMediaTypeError } from "./http-errors.js";

/**
 * The server's guards (DESIGN.md, "Promises under faults": the server binds 127.0.0.1; any other
 * address needs a token; foreign Host and Origin are refused).
 *
 * - Host: a page on evil.example whose name is re-pointed at 127.0.0.1 (DNS rebinding) reaches
 *   this server with `Host: evil.example`, so only the bound address and the loopback names pass.
 * - Origin: a state-changing request from another site's page is refused, even a "simple" one.
 * - Token: with a token every /api request carries `Authorization: Bearer TOKEN`, compared in
 *   constant time.
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

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Equal-length digests: the comparison takes the same time whatever the guess. */
function tokenMatches(presented: string, expected: Buffer): boolean {
  return timingSafeEqual(digest(presented), expected);
}

export function requestGuards(options: GuardOptions): MiddlewareHandler {
  const expected = options.token === undefined ? null : digest(options.token);
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
    if (isApiPath(c.req.path)) {
      if (expected !== null) {
        const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header("authorization") ?? "");
        if (match?.[1] === undefined || !tokenMatches(match[1], expected)) {
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
