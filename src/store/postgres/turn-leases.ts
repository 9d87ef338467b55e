import type pg from "pg";
import { RUNNING_TURN } from "./schema.js";

/** How long a running turn's lease lasts unless its store renews it (the default). */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * The leases of the running turns this store holds. A turn claimed (or started) here is running
 * with `lease_expires_at` = the database's clock + lease; one timer per store renews every held
 * lease each third of the lease, in one UPDATE. While the process lives its turns stay claimed;
 * once it dies (SIGKILL, a lost host) nobody renews them, and the next claimer of the session,
 * on any host, finds the lease expired and marks the turn interrupted. The database's own clock
 * is the only clock compared, so hosts need not agree on the time.
 */
export class TurnLeases {
  readonly #pool: pg.Pool;
  readonly #leaseMs: number;
  readonly #held = new Map<string, { session_id: string; turn_index: number }>();
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;

  constructor(pool: pg.Pool, leaseMs: number) {
    this.#pool = pool;
    this.#leaseMs = leaseMs;
  }

  get leaseMs(): number {
    return this.#leaseMs;
  }

  hold(sessionId: string, turnIndex: number): void {
    this.#held.set(key(sessionId, turnIndex), { session_id: sessionId, turn_index: turnIndex });
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#renew(), Math.max(10, Math.floor(this.#leaseMs / 3)));
      // A lease never keeps a process alive: its end is what the lease is there to notice.
      this.#timer.unref();
    }
  }

  holds(sessionId: string, turnIndex: number): boolean {
    return this.#held.has(key(sessionId, turnIndex));
  }

  release(sessionId: string, turnIndex: number): void {
    this.#held.delete(key(sessionId, turnIndex));
    if (this.#held.size === 0) this.#stop();
  }

  /** Stops renewing (the store closes): its turns' leases run out unless they have ended. */
  async close(): Promise<void> {
    this.#held.clear();
    this.#stop();
    await this.#renewing;
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #renew(): void {
    if (this.#renewing !== undefined || this.#held.size === 0) return;
    const turns = [...this.#held.values()];
    this.#renewing = this.#pool
      .query(
        `UPDATE turns SET lease_expires_at = clock_timestamp() + $3 * interval '1 millisecond'
         FROM unnest($1::text[], $2::int[]) AS held(session_id, turn_index)
         WHERE turns.session_id = held.session_id AND turns.turn_index = held.turn_index
           AND ${RUNNING_TURN}`,
        [turns.map((turn) => turn.session_id), turns.map((turn) => turn.turn_index), this.#leaseMs],
      )
      .then(
        () => {},
        // A failed renewal (the server restarting) is retried at the next tick; a lease lasts
        // three ticks, so one miss loses nothing.
        () => {},
      )
      .finally(() => {
        this.#renewing = undefined;
      });
  }
}

const key = (sessionId: string, turnIndex: number) => `${turnIndex}\n${sessionId}`;
