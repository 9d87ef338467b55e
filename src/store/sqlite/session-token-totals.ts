import type Database from "better-sqlite3";

/**
 * Per-session token totals for `listSessions`, without aggregating every call on every listing
 * and without a second write on every `appendUsage`.
 *
 * `session_token_totals` holds sums of all usage rows with id <= the watermark. A listing adds the
 * few rows above the watermark on the fly (a rowid range scan). When that tail grows past
 * FOLD_THRESHOLD rows, it is folded into the table under the write lock. SQLite assigns rowids
 * inside the write lock, so every committed row below a visible id is visible too: a snapshot never
 * misses a row between the watermark and the newest id.
 */
export const FOLD_THRESHOLD = 5_000;

export class SessionTokenTotals {
  private readonly watermark: Database.Statement<[], { usage_id: number }>;
  private readonly newestUsageId: Database.Statement<[], { id: number | null }>;
  private readonly cached: Database.Statement<[], { session_id: string; total_tokens: number }>;
  private readonly tail: Database.Statement<[number], { session_id: string; total_tokens: number }>;
  private readonly foldTail: Database.Statement<[number, number]>;
  private readonly moveWatermark: Database.Statement<[number]>;
  private readonly forgetSession: Database.Statement<[string]>;

  constructor(private readonly db: Database.Database) {
    this.watermark = db.prepare("SELECT usage_id FROM rollup_watermark WHERE singleton = 1");
    this.newestUsageId = db.prepare("SELECT MAX(id) AS id FROM usage_stats");
    this.cached = db.prepare("SELECT session_id, total_tokens FROM session_token_totals");
    this.tail = db.prepare(
      "SELECT session_id, SUM(total_tokens) AS total_tokens FROM usage_stats WHERE id > ? GROUP BY session_id",
    );
    this.foldTail = db.prepare(`
      INSERT INTO session_token_totals (session_id, total_tokens)
      SELECT session_id, SUM(total_tokens) FROM usage_stats WHERE id > ? AND id <= ? GROUP BY session_id
      ON CONFLICT (session_id) DO UPDATE SET total_tokens = total_tokens + excluded.total_tokens
    `);
    this.moveWatermark = db.prepare("UPDATE rollup_watermark SET usage_id = ? WHERE singleton = 1");
    this.forgetSession = db.prepare("DELETE FROM session_token_totals WHERE session_id = ?");
  }

  /** Totals by session id. Call inside a read transaction so the cache and the tail agree. */
  read(): Map<string, number> {
    const watermark = this.watermark.get()?.usage_id ?? 0;
    const totals = new Map<string, number>();
    for (const row of this.cached.iterate()) totals.set(row.session_id, row.total_tokens);
    for (const row of this.tail.iterate(watermark)) {
      totals.set(row.session_id, (totals.get(row.session_id) ?? 0) + row.total_tokens);
    }
    return totals;
  }

  /** Folds the tail into the cache when it has grown large; cheap to call before every listing. */
  foldIfLarge(): void {
    const watermark = this.watermark.get()?.usage_id ?? 0;
    const newest = this.newestUsageId.get()?.id ?? 0;
    if (newest - watermark < FOLD_THRESHOLD) return;
    this.db
      .transaction(() => {
        // Re-read under the write lock: another process may have folded meanwhile.
        const from = this.watermark.get()?.usage_id ?? 0;
        const to = this.newestUsageId.get()?.id ?? 0;
        if (to <= from) return;
        this.foldTail.run(from, to);
        this.moveWatermark.run(to);
      })
      .immediate();
  }

  /** For a deleted session: its usage rows are gone, so must its cached total be. */
  forget(sessionId: string): void {
    this.forgetSession.run(sessionId);
  }
}
