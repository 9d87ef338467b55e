import { createHash } from "node:crypto";
import type { HttpSegment } from "./http-segment.js";

/**
 * Clients retry a request whose answer they lost (a dropped connection after the turn ended, a
 * timeout just too short): openai-node says so in `X-Stainless-Retry-Count`, others send the same
 * `Idempotency-Key`. Such a retry gets the answer already given, so the turn and its calls are
 * recorded once; a plain repeat of the same request (an eval asking twice) is a new turn.
 */
export const RETRY_COUNT_HEADER = "x-stainless-retry-count";
export const IDEMPOTENCY_HEADER = "idempotency-key";

const KEEP_MS = 10 * 60_000;
const MAX_ENTRIES = 200;
/** What all kept answers may take together. */
const MAX_KEPT_BYTES = 32 * 1024 * 1024;

interface Answered {
  segment: HttpSegment;
  session_id: string | null;
  at: number;
  /** The body's hash, for a request named by an Idempotency-Key (null: the key is the hash). */
  body: string | null;
}

export interface RetryKey {
  /** Computed when first asked (a long conversation's hash is not free). */
  key(): string;
  /** The request says it repeats an earlier one. */
  retry: boolean;
  /**
   * The client says how it retries (a retry count header, even 0, or an Idempotency-Key): only
   * then is its answer kept, since only then could a retry of it be recognised.
   */
  retryable: boolean;
  /**
   * A hash of the body, when the key is not one: an Idempotency-Key sent again with another body
   * is a mistake to refuse, not a retry to answer with the first body's answer.
   */
  body(): string | null;
}

const bodyHash = (body: unknown) => createHash("sha256").update(JSON.stringify(body)).digest("hex");

/**
 * A failed request's name: who sent it (their key and user agent, hashed: two clients with one
 * body are not one conversation, nor two tenants of a `pass_client_key` upstream) and its body.
 */
function failedName(key: RetryKey, client: string): string {
  return `${createHash("sha256").update(client).digest("hex")}:${key.key()}`;
}

/** The key a request is remembered by: its Idempotency-Key, else a hash of its body. */
export function retryKeyOf(
  headers: { retry_count?: string | undefined; idempotency_key?: string | undefined },
  body: unknown,
): RetryKey {
  if (headers.idempotency_key) {
    const key = `key:${headers.idempotency_key}`;
    let hash: string | null = null;
    return {
      key: () => key,
      retry: true,
      retryable: true,
      body: () => {
        hash ??= bodyHash(body);
        return hash;
      },
    };
  }
  const count = Number(headers.retry_count ?? "0");
  let key: string | null = null;
  return {
    key: () => {
      key ??= `body:${bodyHash(body)}`;
      return key;
    },
    retry: Number.isFinite(count) && count > 0,
    retryable: headers.retry_count !== undefined,
    body: () => null,
  };
}

export type RetryVerdict =
  /**
   * Run it; `session_id`: its first attempt failed in that session, which the retry continues
   * (`said`: the client said it retries; else it is the lab's inference, see #unsaidRetry).
   */
  | { kind: "new"; session_id?: string; said?: boolean }
  | { kind: "pending" }
  | { kind: "replay"; response: Response; session_id: string | null }
  /** An Idempotency-Key used before for another body. */
  | { kind: "reused_key" };

/**
 * How long a failed request of a client that does not say it retries is remembered: the AI SDK
 * retries a 429 or 5xx after 2 s, then 4 s, with nothing in the request to say so.
 */
const UNSAID_RETRY_MS = 60_000;
const MAX_FAILED = 64;

/** The statuses the AI SDK retries (and openai-node): the only failures a retry follows. */
function isRetriedStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export class RetryLedger {
  readonly #answered = new Map<string, Answered>();
  /** Requests that failed before any answer, by client and body: their session, and when. */
  readonly #failed = new Map<string, { session_id: string; at: number }>();

  /**
   * What to do with a request: run it, wait for its first attempt, or answer it again. `client`:
   * who sent it (see #unsaidRetry).
   */
  check(key: RetryKey, client = ""): RetryVerdict {
    if (!key.retry) return key.retryable ? { kind: "new" } : this.#unsaidRetry(key, client);
    const earlier = this.#answered.get(key.key());
    if (earlier === undefined || Date.now() - earlier.at > KEEP_MS) {
      return { kind: "new" };
    }
    if (earlier.body !== key.body()) return { kind: "reused_key" };
    if (earlier.segment.pending) return { kind: "pending" };
    const response = earlier.segment.replay();
    if (response !== null) return { kind: "replay", response, session_id: earlier.session_id };
    // The first attempt failed: the retry is a turn of its own, as the failure was, in the same
    // session (one client call is one conversation, not a session per attempt).
    return earlier.session_id === null
      ? { kind: "new" }
      : { kind: "new", session_id: earlier.session_id, said: true };
  }

  /**
   * The same body again soon after it failed unanswered, from a client that does not say it
   * retries (the AI SDK): a retry all the same, run as a new turn in the failed attempt's session
   * (as openai-node's is), not as a session of its own per attempt. Only a failure costs a hash:
   * with none remembered, no body is hashed.
   */
  #unsaidRetry(key: RetryKey, client: string): RetryVerdict {
    this.#pruneFailed();
    if (this.#failed.size === 0) return { kind: "new" };
    const name = failedName(key, client);
    const failed = this.#failed.get(name);
    if (failed === undefined) return { kind: "new" };
    this.#failed.delete(name);
    return { kind: "new", session_id: failed.session_id, said: false };
  }

  /**
   * A request failed with `status` before any answer went out, in `session_id` (see
   * #unsaidRetry): kept only for a client that does not say how it retries, and only for a
   * status such clients retry (a 400 is not tried again).
   */
  failed(key: RetryKey, client: string, status: number, session_id: string): void {
    if (key.retryable || !isRetriedStatus(status)) return;
    const name = failedName(key, client);
    this.#failed.delete(name);
    this.#failed.set(name, { session_id, at: Date.now() });
    this.#pruneFailed();
  }

  /** Oldest first: past the window, or beyond the count. With none left, no body is hashed. */
  #pruneFailed(): void {
    const now = Date.now();
    for (const [oldest, entry] of this.#failed) {
      if (this.#failed.size <= MAX_FAILED && now - entry.at <= UNSAID_RETRY_MS) break;
      this.#failed.delete(oldest);
    }
  }

  remember(key: RetryKey, segment: HttpSegment, session_id: string | null): void {
    if (!key.retryable) return;
    const name = key.key();
    this.#answered.delete(name);
    this.#answered.set(name, { segment, session_id, at: Date.now(), body: key.body() });
    this.#prune();
  }

  /** Oldest first: past their time, beyond the count, or beyond the byte budget. */
  #prune(): void {
    const now = Date.now();
    let bytes = 0;
    for (const entry of this.#answered.values()) bytes += entry.segment.replayBytes;
    for (const [name, entry] of this.#answered) {
      const stale = now - entry.at > KEEP_MS;
      if (!stale && this.#answered.size <= MAX_ENTRIES && bytes <= MAX_KEPT_BYTES) break;
      bytes -= entry.segment.replayBytes;
      this.#answered.delete(name);
    }
  }
}
