import { sanitizeMessage } from "./endpoint-message.js";

/**
 * A request that got no HTTP answer, said so that a user can act on it: which URL, and what went
 * wrong in words ("connection refused at URL") rather than undici's "fetch failed". The kind
 * decides the retries (see connectionRetryLimit): a name that does not resolve will not resolve a
 * second later, a refused port may be a local server restarting, a reset is worth the full count.
 */

export type ConnectionFailureKind = "refused" | "no_such_host" | "other";

export interface ConnectionFailure {
  kind: ConnectionFailureKind;
  /** undici's or the OS's code (ECONNREFUSED, ENOTFOUND, …), when there is one. */
  code: string | null;
  /** Names the URL; never the key. */
  message: string;
}

/** `getaddrinfo` answers: the name does not exist (ENOTFOUND) or no resolver answered for good. */
const NO_SUCH_HOST = new Set(["ENOTFOUND", "EAI_NONAME", "EAI_NODATA"]);

/** `baseUrl` is the configured base URL: what the user wrote, so what they can correct. */
export function describeConnectionFailure(
  error: unknown,
  baseUrl: string,
  apiKey: string | null,
): ConnectionFailure {
  // undici says "fetch failed" and puts the useful part (ECONNREFUSED, ENOTFOUND…) in `cause`.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code =
    cause instanceof Error && "code" in cause && typeof cause.code === "string" ? cause.code : null;
  const detail = cause instanceof Error ? cause.message : String(cause);
  if (code === "ECONNREFUSED") {
    return {
      kind: "refused",
      code,
      message: sanitizeMessage(`connection refused at ${baseUrl}: is the server running?`, apiKey),
    };
  }
  if (code !== null && NO_SUCH_HOST.has(code)) {
    return {
      kind: "no_such_host",
      code,
      message: sanitizeMessage(
        `no such host: ${hostOf(baseUrl)} (from the base URL ${baseUrl}) does not resolve`,
        apiKey,
      ),
    };
  }
  return {
    kind: "other",
    code,
    message: sanitizeMessage(
      `could not reach ${baseUrl}: connection failed (${code ? `${code}: ` : ""}${detail})`,
      apiKey,
    ),
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}
