import type Database from "better-sqlite3";
import { BUSY_TIMEOUT_MS } from "./open-database.js";

/** How often a long-lived store looks whether it has gone quiet since its last writes. */
export const IDLE_CHECK_MS = 2_000;

/**
 * Empties the -wal file (`wal_checkpoint(TRUNCATE)`) once the store has gone idle after writing,
 * and when it closes. The journal size limit already bounds the file after any checkpoint; this
 * gives the space back while a server waits. Nothing runs per write: a timer compares SQLite's
 * change counter between ticks. The checkpoint never waits: while another connection reads, it is
 * skipped and retried at the next quiet tick.
 */
export class WalKeeper {
  readonly #db: Database.Database;
  readonly #changes: Database.Statement | null;
  readonly #timer: NodeJS.Timeout | null;
  #seen = 0;
  #checkpointed = 0;

  constructor(db: Database.Database, wal: boolean) {
    this.#db = db;
    this.#changes = wal ? db.prepare("SELECT total_changes()").pluck() : null;
    this.#timer = wal ? setInterval(() => this.#tick(), IDLE_CHECK_MS) : null;
    // A CLI command's store must not keep the process alive.
    this.#timer?.unref();
  }

  /** Empties the -wal file unless another connection is using it; true when it did. */
  checkpoint(): boolean {
    if (this.#changes === null || !this.#db.open) return false;
    this.#db.pragma("busy_timeout = 0");
    try {
      const [result] = this.#db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      return result?.busy === 0;
    } catch {
      // A checkpoint is housekeeping: a busy or failing one leaves the data as it was.
      return false;
    } finally {
      this.#db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.checkpoint();
  }

  #tick(): void {
    if (this.#changes === null || !this.#db.open) return;
    const changes = this.#changes.get() as number;
    const quiet = changes === this.#seen;
    this.#seen = changes;
    if (quiet && changes !== this.#checkpointed && this.checkpoint()) {
      this.#checkpointed = changes;
    }
  }
}
