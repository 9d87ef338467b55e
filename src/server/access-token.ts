import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";

/**
 * The server's access token and the three ways a request presents it, as Jupyter does:
 * `Authorization: Bearer TOKEN` (API clients), `?token=TOKEN` on a page address (the URL `serve`
 * prints, exchanged once for a cookie), and that cookie (the browser afterwards).
 */

/** 24 random bytes: 192 bits, 32 URL-safe characters. */
export function generateToken(): string {
  return randomBytes(24).toString("base64url");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

export interface TokenCheck {
  /** Constant time: both sides are hashed to 32 bytes first, so no guess ends the comparison early. */
  matches(presented: string | undefined): boolean;
  /** The Set-Cookie value that lets a browser on `host` in. */
  cookie(host: string): string;
}

export function tokenCheck(token: string): TokenCheck {
  const expected = digest(token);
  return {
    matches: (presented) => presented !== undefined && timingSafeEqual(digest(presented), expected),
    cookie: (host) => tokenCookie(host, token),
  };
}

export function bearerToken(c: Context): string | undefined {
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header("authorization") ?? "")?.[1];
}

/**
 * Cookies are shared by every port of a host name, so the name carries the port: two labs on
 * 127.0.0.1 (or a Jupyter beside them) do not overwrite each other's cookie.
 */
function cookieName(host: string): string {
  const port = /:(\d+)$/.exec(host)?.[1] ?? "80";
  return `agent_lab_token_${port}`;
}

export function cookieToken(c: Context, host: string): string | undefined {
  const name = cookieName(host);
  for (const part of (c.req.header("cookie") ?? "").split(";")) {
    const equals = part.indexOf("=");
    if (equals !== -1 && part.slice(0, equals).trim() === name) {
      try {
        return decodeURIComponent(part.slice(equals + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * HttpOnly: no script (nor an injected one) can read it. SameSite=Strict: no other site's page
 * sends it. Encoded, as a chosen token may hold `;` or `,`. No Max-Age: it ends with the browser session, and a generated token with the server.
 */
function tokenCookie(host: string, token: string): string {
  return `${cookieName(host)}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict`;
}

/**
 * The page address without its `token` parameter, as a path (the redirect after the exchange).
 * One leading slash: `//evil.example/` would be another site's address.
 */
export function withoutTokenParameter(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.delete("token");
  return `/${parsed.pathname.replace(/^[/\\]+/, "")}${parsed.search}`;
}
