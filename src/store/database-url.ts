import { InvalidInputError } from "../domain/errors.js";
/**
 * A database's URL as it may be shown. A `postgres://` URL carries its password, a secret like
 * an API key: every printed, logged or thrown URL and every driver message that may echo one goes
 * through here, for both the CLI and the PostgreSQL store.
 */

/**
 * A URI where a database is named and it is not a PostgreSQL URL: SQLite's URI filenames
 * (`file:lab.db?mode=ro`, `file::memory:`), which the driver would make a file of that very name,
 * and any other scheme (a mistyped `postgress://`), which would be opened as a SQLite file. Refused,
 * naming where the name came from (`--db`, `$AGENT_LAB_DB`, `--to`, …).
 */
export function refuseUriName(source: string, name: string): void {
  const trimmed = name.trim();
  if (/^file:/i.test(trimmed)) {
    throw new InvalidInputError(
      `${source}: ${JSON.stringify(name)} is a SQLite URI, which agent-lab would take for a file of that name: give the file's path`,
    );
  }
  // A mistyped PostgreSQL URL (`postgress://`, `pg://`, `postgres:/`) would be opened as a SQLite
  // file of that name (an empty lab, or a missing folder), and shown with its password.
  if (OTHER_URL.test(trimmed) && !isPostgresUrl(trimmed)) {
    throw new InvalidInputError(
      `${source}: agent-lab cannot open ${JSON.stringify(redactUserInfo(trimmed))}: a PostgreSQL URL begins with postgres:// or postgresql://, a SQLite database is a file's path`,
    );
  }
}

/** A URL of some scheme (two letters at least, so a drive letter, `C:/`, stays a path). */
const OTHER_URL = /^[a-z][a-z0-9+.-]+:\//i;

/** Any URL's user-info password blanked (up to its last "@", as partsOf cuts it). */
function redactUserInfo(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/*)([^:/@]*):(.*)@/i, `$1$2:${REDACTED}@`)
    .replace(PASSWORD_PARAMETER, `$1${REDACTED}`);
}

export function isPostgresUrl(target: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(target.trim());
}

const REDACTED = "***";

/**
 * A URL cut where a password might be, the same way for showing it and for scrubbing it. The user
 * info ends at the URL's last "@": a password may hold unencoded "?", "#", "/", ":" or "@". An
 * "@" further on (in the query) makes more of the URL count as user info, which hides too much
 * rather than too little.
 */
interface UrlParts {
  /** `postgres://` */
  scheme: string;
  user: string | null;
  /** As written (percent-encoded or not); null without a ":" in the user info. */
  password: string | null;
  /** Host, port and path. */
  location: string;
  /** From the "?" on, or "". */
  query: string;
}

function partsOf(target: string): UrlParts {
  const schemeEnd = target.indexOf("://") + 3;
  const body = target.slice(schemeEnd);
  const at = body.lastIndexOf("@");
  const userInfo = at === -1 ? null : body.slice(0, at);
  const afterUser = at === -1 ? body : body.slice(at + 1);
  const queryStart = afterUser.indexOf("?");
  const colon = userInfo?.indexOf(":") ?? -1;
  return {
    scheme: target.slice(0, schemeEnd),
    user: userInfo === null ? null : colon === -1 ? userInfo : userInfo.slice(0, colon),
    password: userInfo === null || colon === -1 ? null : userInfo.slice(colon + 1),
    location: queryStart === -1 ? afterUser : afterUser.slice(0, queryStart),
    query: queryStart === -1 ? "" : afterUser.slice(queryStart),
  };
}

const PASSWORD_PARAMETER = /([?&](?:ssl)?password=)([^&#]*)/gi;

/**
 * The URL as it may be shown: the password (in the user info or a `password=` parameter) is
 * replaced by ***. A path is returned as given. Every printed or logged database name goes
 * through here: a password is a secret like an API key.
 */
export function redactDatabaseUrl(target: string): string {
  if (!isPostgresUrl(target)) return target;
  const { scheme, user, password, location, query } = partsOf(target);
  const userInfo = user === null ? "" : password === null ? `${user}@` : `${user}:${REDACTED}@`;
  return `${scheme}${userInfo}${location}${query.replace(PASSWORD_PARAMETER, `$1${REDACTED}`)}`;
}

/** The secrets a URL carries (its passwords, decoded and as written), to scrub from messages. */
function secretsOf(target: string): string[] {
  if (!isPostgresUrl(target)) return [];
  const { password, query } = partsOf(target);
  const secrets = new Set<string>();
  if (password) secrets.add(password);
  for (const [, , value] of query.matchAll(PASSWORD_PARAMETER)) {
    if (value) secrets.add(value);
  }
  for (const secret of [...secrets]) {
    try {
      secrets.add(decodeURIComponent(secret));
    } catch {}
  }
  // Longest first, so a secret holding a shorter one is replaced whole.
  return [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * A message with every secret of the URL replaced by ***, where it stands as a word of its own
 * (not inside a longer run of letters and digits): a password `e` or `x` replaced inside every
 * word mangled the message ("auth***ntication fail***d") and showed what the password was.
 */
export function scrubDatabaseSecrets(message: string, target: string): string {
  let scrubbed = message;
  for (const secret of secretsOf(target)) {
    const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    // A side of the password that is a letter or digit must not continue a word; a side that is
    // a symbol (`-x9Qz!`) is an edge of its own.
    const before = /^[A-Za-z0-9]/.test(secret) ? "(?<![A-Za-z0-9])" : "";
    const after = /[A-Za-z0-9]$/.test(secret) ? "(?![A-Za-z0-9])" : "";
    scrubbed = scrubbed.replace(new RegExp(`${before}${escaped}${after}`, "g"), REDACTED);
  }
  return scrubbed;
}
