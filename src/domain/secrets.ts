/**
 * Keys whose values are credentials. `api_key_env` (the *name* of a variable) is deliberately not
 * matched: naming where a secret lives is the safe way to configure one. Header spellings
 * (`x-api-key`, `x-goog-api-key`, `Ocp-Apim-Subscription-Key`, `Proxy-Authorization`) are matched
 * too, because a config's `headers` is just another object.
 */
const SECRET_KEY =
  /^(?:x[_-]?)?(?:goog[_-]?)?(?:api[_-]?key|apikey|authorization|proxy[_-]?authorization|password|passwd|pass|pwd|secret|client[_-]?secret|secret[_-]?key|secret[_-]?access[_-]?key|access[_-]?key[_-]?id|private[_-]?key|token|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|bearer[_-]?token|session[_-]?token|security[_-]?token|api[_-]?token|cookie|set[_-]?cookie|credentials?|ocp[_-]?apim[_-]?subscription[_-]?key|subscription[_-]?key)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export type JsonPath = (string | number)[];

export interface CredentialProblem {
  path: JsonPath;
  message: string;
}

export const SECRET_KEY_MESSAGE =
  "secrets are never stored with a session; put the key in an environment variable and name it with api_key_env";

/**
 * A header value that names an environment variable: `${NAME}`, or an auth scheme word and one
 * (`Bearer ${NAME}`). Resolved when a request is sent, so the stored config never holds the value.
 */
export const HEADER_ENV_REFERENCE = /^(?:([A-Za-z][A-Za-z0-9-]*) )?\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * Headers documented by endpoints as identifying, never authenticating (OpenRouter's app name and
 * referrer, OpenAI's organization and project ids): these may hold a literal. Every other header
 * must name an environment variable, because a list of secret header *names* can never be
 * complete (gateways invent their own) while "values come from the environment" cannot leak.
 */
const LITERAL_HEADERS = new Set([
  "x-title",
  "http-referer",
  "referer",
  "user-agent",
  "openai-organization",
  "openai-project",
  "openai-beta",
  "accept-language",
]);

/** Query parameters that carry credentials in the wild (Azure SAS `sig`, Gemini `key`, OAuth `code`). */
const SECRET_QUERY_PARAMETER =
  /^(?:api[_-]?key|apikey|key|token|access[_-]?token|auth|auth[_-]?token|sig|signature|code|secret|client[_-]?secret|password|x-goog-api-key|subscription-key)$/i;

const HEADER_MESSAGE =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows the literal syntax
  "header values name an environment variable holding a key (`${NAME}`, or `Bearer ${NAME}`; a name ending in KEY or TOKEN), resolved when a request is sent; a literal value could be a credential stored with the session (identifying headers such as X-Title may hold a literal)";

/**
 * Every place in a config that would store a credential: secret-named keys at any depth, literal
 * values in a `headers` object, and credentials in URLs (`user:pass@`, `?api-key=`). Configs are
 * bounded in depth before this runs (see json-limits.ts), so the recursion is bounded too.
 */
export function findCredentialProblems(value: unknown, path: JsonPath = []): CredentialProblem[] {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => findCredentialProblems(item, [...path, index]));
  }
  if (typeof value === "string") {
    const problem = urlCredentialProblem(value);
    return problem ? [{ path, message: problem }] : [];
  }
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, child]): CredentialProblem[] => {
    const childPath = [...path, key];
    if (isSecretKey(key) && !isEnvironmentReference(child)) {
      return [{ path: childPath, message: SECRET_KEY_MESSAGE }];
    }
    if (key === "headers" && child !== null && typeof child === "object" && !Array.isArray(child)) {
      return Object.entries(child).flatMap(([name, header]) =>
        headerIsSafe(name, header) ? [] : [{ path: [...childPath, name], message: HEADER_MESSAGE }],
      );
    }
    return findCredentialProblems(child, childPath);
  });
}

/** Paths of every key, at any depth, that would store a credential. */
export function findSecretKeys(value: unknown): JsonPath[] {
  return findCredentialProblems(value).map((problem) => problem.path);
}

function isEnvironmentReference(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const variable = HEADER_ENV_REFERENCE.exec(value)?.[2];
  return variable !== undefined && isKeyVariableName(variable);
}

/**
 * Whether a config may name this environment variable as a key (`api_key_env`, a header's
 * `${NAME}`): its name ends in KEY or TOKEN, and it is not the lab's own token. Its value goes to
 * whatever endpoint the config names, and a config comes from anyone holding the API token (a
 * session, a suite, an endpoint check): any other name let them send the lab's environment
 * (`PGPASSWORD`, `AGENT_LAB_TOKEN`, `HOME`) to a URL of their choosing.
 */
export function isKeyVariableName(name: string): boolean {
  return /(?:KEY|TOKEN)$/i.test(name) && name !== "AGENT_LAB_TOKEN";
}

export const KEY_VARIABLE_MESSAGE =
  "must name the environment variable holding a key: a name ending in KEY or TOKEN (OPENAI_API_KEY, HF_TOKEN), never AGENT_LAB_TOKEN";

function headerIsSafe(name: string, value: unknown): boolean {
  if (isEnvironmentReference(value)) return true;
  if (!LITERAL_HEADERS.has(name.toLowerCase()) || typeof value !== "string") return false;
  return redactSecretText(value) === value;
}

/** Why a string that is an http(s) URL carries a credential, or null. */
function urlCredentialProblem(text: string): string | null {
  if (!/^https?:\/\//i.test(text.trim())) return null;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.username || url.password) {
    return "a URL must not contain credentials (user:password@); use api_key_env";
  }
  for (const name of url.searchParams.keys()) {
    if (SECRET_QUERY_PARAMETER.test(name)) {
      return `a URL must not carry a credential in its query (${name}=); use api_key_env or a header naming an environment variable`;
    }
  }
  return null;
}

export const REDACTED = "[redacted]";

/**
 * Values the lab itself sends as credentials in this process (keys and header values read from
 * the environment). They are blanked wherever they appear in text the lab keeps, whatever an
 * endpoint does with them. Short values are not remembered: redacting "1" everywhere helps nobody.
 */
const knownSecretValues = new Set<string>();
const MIN_REMEMBERED_SECRET_LENGTH = 8;
/**
 * The most recent keys only: a gateway passing its clients' own keys sees a new one per client,
 * and neither memory nor every redaction's scan may grow with them for the life of the process.
 */
const MAX_REMEMBERED_SECRETS = 256;

/** The remembered values as UTF-8, for scanning bytes; rebuilt when the set changes. */
let knownSecretBytesCache: readonly Uint8Array[] | null = null;
/** The remembered values longest first; rebuilt when the set changes. */
let knownSecretsCache: readonly string[] | null = null;

function knownSecretsLongestFirst(): readonly string[] {
  knownSecretsCache ??= longestFirst(knownSecretValues);
  return knownSecretsCache;
}

export function rememberSecretValue(value: string | null | undefined): void {
  const trimmed = value?.trim();
  if (!trimmed || trimmed.length < MIN_REMEMBERED_SECRET_LENGTH) return;
  if (!knownSecretValues.has(trimmed)) {
    knownSecretBytesCache = null;
    knownSecretsCache = null;
  }
  knownSecretValues.delete(trimmed);
  knownSecretValues.add(trimmed);
  if (knownSecretValues.size > MAX_REMEMBERED_SECRETS) {
    const oldest = knownSecretValues.values().next().value;
    if (oldest !== undefined) knownSecretValues.delete(oldest);
  }
}

/** Longest first: a key that begins with a shorter one is blanked whole, not its tail left. */
function longestFirst(values: Iterable<string>): string[] {
  return [...values].sort((a, b) => b.length - a.length);
}

/** The values `rememberSecretValue` keeps, as UTF-8 bytes (see SecretScrubber). */
export function knownSecretBytes(): readonly Uint8Array[] {
  knownSecretBytesCache ??= knownSecretsLongestFirst().map((value) =>
    new TextEncoder().encode(value),
  );
  return knownSecretBytesCache;
}

/** Well-known key shapes; the name part of `key=VALUE` is kept so the text still reads. */
export const SECRET_SHAPES: readonly [RegExp, string][] = [
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\b(?:gh[pousr]_|github_pat_|xox[abposr]-|glpat-)[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [
    /\b((?:x-)?(?:api[_-]?key|apikey|key|token|access[_-]?token|sig|signature|secret|password)["']?\s*[=:]\s*["']?)[A-Za-z0-9._~+/%-]{8,}/gi,
    `$1${REDACTED}`,
  ],
];

/**
 * Text every shape above needs somewhere (each one's literal part, case aside, and where a shape
 * needs a word boundary before it, that too): a text without any is left as it is after these
 * scans instead of one per shape. Most texts an audit row holds (ids, names, counts) have none, and
 * neither has a captured response whose only near miss is its usage's `prompt_tokens` (without
 * the boundary, every captured stream paid all five scans: 0.6 ms on a 200 KB body). Three
 * scans rather than one alternation of every word: V8 runs a long case-insensitive alternation
 * at a fraction of the speed of shorter ones (on a 200 KB captured stream, 0.42 ms as one
 * expression against 0.27 ms as these three). A test checks over random texts that no shape
 * matches where none of these does.
 */
const SHAPE_HINTS: readonly RegExp[] = [
  /\b(?:token|secret|password|bearer|basic|api[_-]?key|apikey|access[_-]?token)/i,
  /\b(?:key|sig)/i,
  /[spr]k-|aiza|gh[pousr]_|github_pat_|xox[abposr]-|glpat-/i,
];

/** False when no key shape can be in the text (see SHAPE_HINTS); true says only "look closer". */
export function mayHoldKeyShape(text: string): boolean {
  for (const hint of SHAPE_HINTS) if (hint.test(text)) return true;
  return false;
}

/**
 * How far a hint's match reaches, the character before it (`\b`) included: "access_token" and
 * "github_pat_" are the longest, with room to spare for a hint added later.
 */
const HINT_REACH = 32;

/**
 * False when `redactSecretText` would give back, unchanged, the text these pieces make once
 * joined: no piece, and no join between two, holds a remembered key or a key shape's hint. Asked
 * of a captured body's pieces as read, this spares the body's whole text: joining 200 KB into one
 * string is a block of fresh memory (page faults: on the lab's VM it cost as much as two of the
 * scans), and a body found clean is then stored from its own bytes, not its text encoded again.
 * A join is checked by the text within reach on both of its sides (the longest key or hint), the
 * sides running over as many pieces as they need: a match that crosses joins is inside the window
 * of the last one it crosses.
 */
export function piecesMayHoldSecret(pieces: readonly string[]): boolean {
  const secrets = knownSecretsLongestFirst();
  const reach = Math.max(HINT_REACH, secrets[0]?.length ?? 0);
  const mayHold = (text: string) =>
    mayHoldKeyShape(text) || secrets.some((secret) => text.includes(secret));
  let before = "";
  for (const piece of pieces) {
    if (piece === "") continue;
    if (before !== "" && mayHold(before + piece.slice(0, reach))) return true;
    if (mayHold(piece)) return true;
    before = piece.length >= reach ? piece.slice(-reach) : (before + piece).slice(-reach);
  }
  return false;
}

/** The text with the values `rememberSecretValue` keeps blanked out, and nothing else changed. */
export function redactKnownSecrets(text: string): string {
  let clean = text;
  for (const value of knownSecretsLongestFirst()) {
    if (clean.includes(value)) clean = clean.split(value).join(REDACTED);
  }
  return clean;
}

/**
 * Blanks the lab's own keys (the values `rememberSecretValue` keeps) in text that arrives in
 * pieces, such as a model's streamed answer: an endpoint may echo the key it was sent, and what
 * the lab stores and shows must never hold it. A key split between pieces is caught by holding
 * back a piece's end while it could begin one, until the next piece (or `end`) settles it. Without
 * any key remembered (the sim, an endpoint without one) a piece passes as it is.
 */
export class SecretTextScrubber {
  #held = "";
  #blanks = 0;

  /** How many keys (or ends of one) were blanked: the raw stream holds each, split or whole. */
  get blanks(): number {
    return this.#blanks;
  }

  /** Whether it holds back the beginning of a key (settled by the next piece, or `end`). */
  get holding(): boolean {
    return this.#held !== "";
  }

  push(piece: string): string {
    const secrets = knownSecretsLongestFirst();
    if (secrets.length === 0 && this.#held === "") return piece;
    const text = this.#held + piece;
    // Held back: the longest end that could begin a key, and any key that reaches into it (a key
    // may hold another: the inner one, whole already, goes with the outer once that one is whole).
    let holdFrom = text.length;
    for (const secret of secrets) {
      for (let length = Math.min(secret.length - 1, text.length); length > 0; length--) {
        if (text.length - length >= holdFrom) break;
        if (text.endsWith(secret.slice(0, length))) {
          holdFrom = text.length - length;
          break;
        }
      }
    }
    for (let moved = true; moved; ) {
      moved = false;
      for (const secret of secrets) {
        const at = text.indexOf(secret, Math.max(0, holdFrom - secret.length + 1));
        if (at !== -1 && at < holdFrom && at + secret.length > holdFrom) {
          holdFrom = at;
          moved = true;
        }
      }
    }
    this.#held = text.slice(holdFrom);
    return this.#clean(text.slice(0, holdFrom));
  }

  /**
   * What is still held when the text ends: the beginning of a key that never came whole (or a
   * key inside a longer one that did not follow). Most of a key is still a leak, so a held end as
   * long as the shortest key kept is blanked; a shorter one (`sk-` closing a sentence) is given
   * as it is.
   */
  end(): string {
    const held = this.#held;
    this.#held = "";
    if (held.length < MIN_REMEMBERED_SECRET_LENGTH) return this.#clean(held);
    this.#blanks += 1;
    return REDACTED;
  }

  #clean(text: string): string {
    const clean = redactKnownSecrets(text);
    if (clean !== text) this.#blanks += knownSecretsBlanked(text, clean);
    return clean;
  }
}

/** How many values `redactKnownSecrets(text)` blanked to give `clean`. */
export function knownSecretsBlanked(text: string, clean: string): number {
  return clean.split(REDACTED).length - text.split(REDACTED).length;
}

/** The text with every known secret value and well-known key shape blanked out. */
export function redactSecretText(text: string): string {
  let clean = redactKnownSecrets(text);
  if (!mayHoldKeyShape(clean)) return clean;
  for (const [pattern, replacement] of SECRET_SHAPES) clean = clean.replace(pattern, replacement);
  return clean;
}

/**
 * A copy with every credential replaced, for places (the audit log, imports) that must never hold
 * one: values under secret-named keys, and secret-looking text in any string.
 */
export function redactSecrets<T>(value: T): T {
  if (typeof value === "string") return redactSecretText(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item)) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      isSecretKey(key) ? REDACTED : redactSecrets(child),
    ]),
  ) as T;
}
