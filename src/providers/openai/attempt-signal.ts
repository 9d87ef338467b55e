/**
 * The abort signal of one HTTP attempt. The caller's signal, the request timeout and the idle
 * timeout all abort the same fetch (stopping both the connection and the body read); the reason
 * it was aborted for tells them apart afterwards.
 */

export const REQUEST_TIMEOUT = new DOMException("no response headers in time", "TimeoutError");
export const IDLE_TIMEOUT = new DOMException("the stream went silent", "TimeoutError");
/** Also the reason a body left unread is cancelled with: without one, undici builds a fresh error. */
export const FINISHED = new DOMException("the attempt is over", "AbortError");

/**
 * The signal of a whole call: the caller's cancellation or the call's deadline, whichever comes
 * first, with its own reason. One controller and one listener: `AbortSignal.any` cost about 25 µs
 * a call here, and its sources keep weak references to every signal it ever made.
 */
export class CallSignal {
  readonly #controller = new AbortController();
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCallerAbort = (): void => this.#controller.abort(this.#callerSignal?.reason);
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(callerSignal: AbortSignal | undefined, deadlineMs: number, expired: () => Error) {
    this.#callerSignal = callerSignal;
    if (callerSignal?.aborted) this.#onCallerAbort();
    else callerSignal?.addEventListener("abort", this.#onCallerAbort, { once: true });
    this.#timer = setTimeout(() => this.#controller.abort(expired()), deadlineMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The call is over: no timer or listener outlives it. */
  close(): void {
    clearTimeout(this.#timer);
    this.#callerSignal?.removeEventListener("abort", this.#onCallerAbort);
  }
}

export class AttemptSignal {
  readonly #controller = new AbortController();
  readonly #userSignal: AbortSignal | undefined;
  readonly #onUserAbort = (): void => this.#controller.abort(this.#userSignal?.reason);
  #settled = false;

  constructor(userSignal?: AbortSignal) {
    this.#userSignal = userSignal;
    if (userSignal?.aborted) this.#onUserAbort();
    else userSignal?.addEventListener("abort", this.#onUserAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the attempt was aborted: one of the timeouts, the caller's reason, or undefined. */
  get reason(): unknown {
    return this.#controller.signal.aborted ? this.#controller.signal.reason : undefined;
  }

  /** Aborts with `reason` after `ms` unless the returned function is called first. */
  startTimer(ms: number, reason: DOMException): () => void {
    const timer = setTimeout(() => this.abort(reason), ms);
    return () => clearTimeout(timer);
  }

  /** Aborts now, with one of the timeouts as the reason. */
  abort(reason: DOMException): void {
    this.#controller.abort(reason);
  }

  /** The caller's cancellation wins over every other explanation of a failure. */
  throwIfUserAborted(): void {
    this.#userSignal?.throwIfAborted();
  }

  /** The response body was read to its end or cancelled: the connection needs no stopping. */
  settle(): void {
    this.#settled = true;
  }

  /** Stops whatever is still running (connection, body) and unhooks the caller's signal. */
  close(): void {
    // An abort is not free (abort events on this signal and undici's own, its teardown): a call
    // pays for it only when something may still be running.
    if (!this.#settled) this.#controller.abort(FINISHED);
    this.#userSignal?.removeEventListener("abort", this.#onUserAbort);
  }
}
