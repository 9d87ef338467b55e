import type Database from "better-sqlite3";
import { backfillTableCosts } from "./cost-backfill.js";
import { REBUILD_EXPERIMENT_SUMMARIES } from "./experiment-summaries.js";
import { BACKFILL, INDEXES, SCHEMA_VERSION, TABLES, TRIGGERS } from "./schema.js";
import { rebuildTurnUsage } from "./turn-usage.js";
import { AGGREGATE_COLUMNS } from "./usage-rollups.js";

interface ColumnInfo {
  name: string;
}

/**
 * Brings any layout the lab ever wrote up to SCHEMA_VERSION, additively: nothing is dropped or
 * rewritten except duplicate metric keys, which must go before the unique index can exist, and
 * the price-table cost is filled in where a model call has none (cost-backfill.ts).
 *
 * Several processes may open one legacy file at once. Everything happens inside one
 * BEGIN IMMEDIATE transaction, which takes the write lock *before* the layout is read, so the
 * second opener waits, then reads the finished layout and finds nothing to do. Reading the layout
 * first and locking later is exactly the race the concurrency test catches.
 */
export function migrate(db: Database.Database): void {
  db.transaction(() => {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version >= SCHEMA_VERSION) return;

    for (const table of TABLES) {
      db.exec(table.create);
      const present = new Set(
        (db.pragma(`table_xinfo(${table.name})`) as ColumnInfo[]).map((column) => column.name),
      );
      // table_xinfo, not table_info: generated columns are listed only there.
      for (const [name, definition] of table.columns) {
        if (!present.has(name))
          db.exec(`ALTER TABLE ${table.name} ADD COLUMN ${name} ${definition}`);
      }
    }

    // Lowest id wins, as in the seed: it was recorded first, later copies were retries.
    db.exec(`
      DELETE FROM usage_stats
      WHERE metric_key IS NOT NULL
        AND id NOT IN (
          SELECT MIN(id) FROM usage_stats WHERE metric_key IS NOT NULL GROUP BY session_id, metric_key
        )
    `);
    for (const statement of INDEXES) db.exec(statement);
    for (const statement of TRIGGERS) db.exec(statement);
    // Version 4: the filter tables and columns, filled for the rows written before them.
    if (version < 4) for (const statement of BACKFILL) db.exec(statement);
    // Version 3 records each call's price-table cost; rows from before it get theirs now.
    if (version < 3) backfillTableCosts(db);
    // Version 5: the turns' roll-ups, from the calls that survived the steps above.
    if (version < 5)
      for (const statement of rebuildTurnUsage(AGGREGATE_COLUMNS)) db.exec(statement);
    // Version 5: the experiments' summaries, from their sessions.
    if (version < 5) for (const statement of REBUILD_EXPERIMENT_SUMMARIES) db.exec(statement);

    // The listing caches are rebuilt from the rows themselves; usage rows may have gone above.
    db.exec(`UPDATE sessions SET folded_tokens = 0,
      turn_count = (SELECT COUNT(*) FROM turns WHERE turns.session_id = sessions.id)`);
    db.exec("INSERT OR REPLACE INTO rollup_watermark (singleton, usage_id) VALUES (1, 0)");
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
