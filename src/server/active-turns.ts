import { TurnInProgressError } from "../domain/errors.js";

interface RunningTurn {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The turns this server is running, one per session: a second turn on a session is refused (409)
 * before anything starts, a session cannot be deleted under its running turn, and shutting the
 * server down cancels every turn and waits until each is stored.
 */
export class ActiveTurns {
  readonly #running = new Map<string, RunningTurn>();

  has(sessionId: string): boolean {
    return this.#running.has(sessionId);
  }

  /** Claims the session; `finish` releases it once the turn is stored, whatever happened. */
  start(sessionId: string): { signal: AbortSignal; abort(reason: Error): void; finish(): void } {
    if (this.#running.has(sessionId)) throw new TurnInProgressError(sessionId, null, null);
    const controller = new AbortController();
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = () => {
        if (this.#running.get(sessionId)?.controller === controller)
          this.#running.delete(sessionId);
        resolve();
      };
    });
    this.#running.set(sessionId, { controller, done });
    return {
      signal: controller.signal,
      abort: (reason) => controller.abort(reason),
      finish,
    };
  }

  /** Cancels every running turn and resolves when all are stored, or after `timeoutMs`. */
  async cancelAll(reason: Error, timeoutMs: number): Promise<void> {
    const turns = [...this.#running.values()];
    for (const turn of turns) turn.controller.abort(reason);
    await settledWithin(Promise.all(turns.map((turn) => turn.done)), timeoutMs);
  }
}

/** Waits for `work`, or `timeoutMs` at most (shutdown must not hang on a stuck tool). */
export async function settledWithin(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([work, timeout]);
  clearTimeout(timer);
}
