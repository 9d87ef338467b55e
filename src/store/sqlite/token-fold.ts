import type Database from "better-sqlite3";

/**
 * Per-session token totals for `listSessions`, without aggregating every call on each listing and
 * without a second write in every `appendUsage`.
 *
 * `sessions.folded_tokens` holds the sum of the session's usage rows with id <= the watermark. A
 * listing adds the few rows above the watermark on the fly (a rowid range scan). Once that tail
 * passes FOLD_THRESHOLD rows it is folded in under the write lock. SQLite assigns rowids inside the
 * write lock, so a snapshot that sees some id also sees every committed id below it: the tail never
 * misses a row between the watermark and the newest call.
 */
export const FOLD_THRESHOLD = 5_000;

export class TokenFold {
  private readonly watermark: Database.Statement<[], { usage_id: number }>;
  private readonly newestUsageId: Database.Statement<[], { id: number | null }>;
  private readonly tailRows: Database.Statement<
    [number],
    { session_id: string; total_tokens: number }
  >;
  private readonly foldTail: Database.Statement<[number, number]>;
  private readonly moveWatermark: Database.Statement<[number]>;

  constructor(private readonly db: Database.Database) {
    this.watermark = db.prepare("SELECT usage_id FROM rollup_watermark WHERE singleton = 1");
    this.newestUsageId = db.prepare("SELECT MAX(id) AS id FROM usage_stats");
    // No GROUP BY: grouping tempts the planner into the session index and a scan of every call.
    this.tailRows = db.prepare("SELECT session_id, total_tokens FROM usage_stats WHERE id > ?");
    this.foldTail = db.prepare(`
      UPDATE sessions SET folded_tokens = folded_tokens + tail.total_tokens
      FROM (SELECT session_id, SUM(total_tokens) AS total_tokens FROM usage_stats
            WHERE id > ? AND id <= ? GROUP BY session_id) AS tail
      WHERE sessions.id = tail.session_id`);
    this.moveWatermark = db.prepare("UPDATE rollup_watermark SET usage_id = ? WHERE singleton = 1");
  }

  /** Tokens above the watermark by session. Read in the same transaction as `folded_tokens`. */
  tail(): Map<string, number> {
    const watermark = this.watermark.get()?.usage_id ?? 0;
    const totals = new Map<string, number>();
    for (const row of this.tailRows.iterate(watermark)) {
      totals.set(row.session_id, (totals.get(row.session_id) ?? 0) + row.total_tokens);
    }
    return totals;
  }

  /** Folds the tail in when it has grown large; cheap enough to call before every listing. */
  foldIfLarge(): void {
    const watermark = this.watermark.get()?.usage_id ?? 0;
    const newest = this.newestUsageId.get()?.id ?? 0;
    if (newest - watermark < FOLD_THRESHOLD) return;
    this.db
      .transaction(() => {
        // Read again under the write lock: another process may have folded meanwhile.
        const from = this.watermark.get()?.usage_id ?? 0;
        const to = this.newestUsageId.get()?.id ?? 0;
        if (to <= from) return;
        this.foldTail.run(from, to);
        this.moveWatermark.run(to);
      })
      .immediate();
  }
}
