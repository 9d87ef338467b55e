/**
 * A database's name as it may be shown. A `postgres://` URL carries its password, a secret like
 * an API key: every printed, logged or thrown database name and every driver message that may
 * echo the URL goes through here, for both the CLI and the PostgreSQL store.
 */

export function isPostgresUrl(target: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(target.trim());
}

const REDACTED = "***";

/**
 * The URL as it may be shown: the password (in the user info or a `password=` parameter) is
 * replaced by ***. A path is returned as given. Every printed or logged database name goes
 * through here: a password is a secret like an API key.
 */
export function redactDatabaseUrl(target: string): string {
  if (!isPostgresUrl(target)) return target;
  const schemeEnd = target.indexOf("://") + 3;
  // The user info ends at the last "@" before the path/query: an unencoded "@" in a password
  // must not leave the rest of it shown.
  const queryStart = target.indexOf("?", schemeEnd);
  const authorityAndPath =
    queryStart === -1 ? target.slice(schemeEnd) : target.slice(schemeEnd, queryStart);
  const at = authorityAndPath.lastIndexOf("@");
  let head = target.slice(0, schemeEnd);
  let rest = authorityAndPath;
  if (at !== -1) {
    const userInfo = authorityAndPath.slice(0, at);
    const colon = userInfo.indexOf(":");
    head += colon === -1 ? `${userInfo}@` : `${userInfo.slice(0, colon)}:${REDACTED}@`;
    rest = authorityAndPath.slice(at + 1);
  }
  const query =
    queryStart === -1
      ? ""
      : target
          .slice(queryStart)
          .replace(/([?&]password=)[^&#]*/gi, `$1${REDACTED}`)
          .replace(/([?&]sslpassword=)[^&#]*/gi, `$1${REDACTED}`);
  return `${head}${rest}${query}`;
}

/** The secrets a URL carries (its password, decoded and as written), to scrub from messages. */
function secretsOf(target: string): string[] {
  if (!isPostgresUrl(target)) return [];
  const secrets = new Set<string>();
  const shown = redactDatabaseUrl(target);
  // Whatever redaction removed is secret, whichever way it was written.
  const match = /^[^:]+:\/\/[^:@/]*:(.*)@/.exec(target.split("?")[0] ?? "");
  if (match?.[1]) secrets.add(match[1]);
  for (const [, value] of target.matchAll(/[?&](?:ssl)?password=([^&#]*)/gi)) {
    if (value) secrets.add(value);
  }
  for (const secret of [...secrets]) {
    try {
      secrets.add(decodeURIComponent(secret));
    } catch {}
  }
  return [...secrets].filter((secret) => secret.length > 0 && !shown.includes(secret));
}

/** A message with every secret of the URL replaced by ***. */
export function scrubDatabaseSecrets(message: string, target: string): string {
  let scrubbed = message;
  for (const secret of secretsOf(target)) scrubbed = scrubbed.split(secret).join(REDACTED);
  return scrubbed;
}
