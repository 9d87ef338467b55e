import type Database from "better-sqlite3";

/**
 * Copies template sessions many times over, set-based, from an attached template file into the
 * target: every table with a `session_id` column is copied with the new id, every `*_at` column is
 * shifted by the clone's offset, and everything else (including columns other parts of the lab
 * add later) is copied as is. Generated columns recompute themselves and triggers fire; a table
 * the triggers fill (tags, title search) is left to them. So the clone is what the store would
 * hold had it written each session itself.
 */

export interface Clone {
  new_id: string;
  template_id: string;
  title: string;
  /** The clone's `created_at`; every timestamp of the template moves by the same amount. */
  created_at: string;
  /** Replaces the config's `experiment.id` when the template has one. */
  experiment_id: string | null;
  /** Replaces `experiment.repetition` (and the run key's last part) when set. */
  repetition: number | null;
}

interface ColumnInfo {
  name: string;
  type: string;
  pk: number;
  hidden: number;
}

function visibleColumns(db: Database.Database, schema: string, table: string): ColumnInfo[] {
  return (db.pragma(`${schema}.table_xinfo(${table})`) as ColumnInfo[]).filter(
    (column) => column.hidden === 0,
  );
}

const SHIFT =
  "strftime('%Y-%m-%dT%H:%M:%fZ', julianday(t.{col}) + (julianday(m.created_at) - julianday(s.created_at)))";

const EXPERIMENT_CONFIG = `CASE
  WHEN m.experiment_id IS NULL OR json_extract(t.config_json, '$.experiment.id') IS NULL THEN t.config_json
  WHEN m.repetition IS NULL THEN json_set(t.config_json, '$.experiment.id', m.experiment_id)
  ELSE json_set(t.config_json, '$.experiment.id', m.experiment_id, '$.experiment.repetition', m.repetition,
    '$.experiment.run_key', json_extract(t.config_json, '$.experiment.cell') || '/' ||
      json_extract(t.config_json, '$.experiment.scenario') || '/' || m.repetition)
END`;

/** The SELECT expression that fills `column` of a cloned row of `table`. */
function expression(table: string, column: ColumnInfo): string | null {
  const name = column.name;
  if (table === "sessions") {
    if (name === "id") return "m.new_id";
    if (name === "title") return "m.title";
    if (name === "config_json") return EXPERIMENT_CONFIG;
    // A per-session cache of the usage rows folded so far; the store refolds from the rows.
    if (name === "folded_tokens") return "0";
  } else {
    if (name === "session_id") return "m.new_id";
    // Autoincrement ids are assigned afresh, in the template's order (ORDER BY below).
    if (column.pk === 1 && column.type.toUpperCase() === "INTEGER") return null;
  }
  if (name.endsWith("_at")) return SHIFT.replaceAll("{col}", name);
  return `t.${name}`;
}

/** Whether inserting the cloned sessions already wrote rows of `table` for them (a trigger did). */
function filledByTriggers(db: Database.Database, table: string): boolean {
  return (
    db
      .prepare(
        `SELECT 1 FROM main.${table} WHERE session_id IN (SELECT new_id FROM temp.clone_map) LIMIT 1`,
      )
      .get() !== undefined
  );
}

/**
 * Clones `clones` (in order) from the tables of the database attached as `template` into main,
 * in one transaction per table. Tables without sessions in them (watermarks, caches) are left.
 */
export function cloneSessions(
  db: Database.Database,
  template: string,
  clones: readonly Clone[],
): void {
  db.exec(`DROP TABLE IF EXISTS temp.clone_map;
    CREATE TEMP TABLE clone_map (seq INTEGER PRIMARY KEY, new_id TEXT NOT NULL, template_id TEXT NOT NULL,
      title TEXT NOT NULL, created_at TEXT NOT NULL, experiment_id TEXT, repetition INTEGER)`);
  const insert = db.prepare(
    "INSERT INTO temp.clone_map (new_id, template_id, title, created_at, experiment_id, repetition) VALUES (?, ?, ?, ?, ?, ?)",
  );
  db.transaction(() => {
    for (const clone of clones) {
      insert.run(
        clone.new_id,
        clone.template_id,
        clone.title,
        clone.created_at,
        clone.experiment_id,
        clone.repetition,
      );
    }
  })();

  const tables = db
    .prepare(
      `SELECT name, sql FROM ${template}.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
    )
    .all() as { name: string; sql: string }[];
  // Sessions first: their triggers may fill other tables (tags, search), which are then left alone.
  tables.sort((a, b) => Number(b.name === "sessions") - Number(a.name === "sessions"));
  for (const { name: table, sql } of tables) {
    // A virtual table (full-text search) and its shadow tables are the triggers' business.
    if (/^CREATE VIRTUAL TABLE/i.test(sql)) continue;
    const target = new Set(visibleColumns(db, "main", table).map((column) => column.name));
    const columns = visibleColumns(db, template, table).filter((column) => target.has(column.name));
    const key = table === "sessions" ? "id" : "session_id";
    if (!columns.some((column) => column.name === key)) continue;
    if (table !== "sessions" && filledByTriggers(db, table)) continue;
    const pairs = columns
      .map((column) => [column.name, expression(table, column)] as const)
      .filter((pair): pair is readonly [string, string] => pair[1] !== null);
    const order = /WITHOUT\s+ROWID/i.test(sql) ? "m.seq" : "m.seq, t.rowid";
    db.transaction(() => {
      db.exec(`INSERT INTO main.${table} (${pairs.map(([name]) => name).join(", ")})
        SELECT ${pairs.map(([, value]) => value).join(", ")}
        FROM temp.clone_map AS m
        JOIN ${template}.${table} AS t ON t.${key} = m.template_id
        JOIN ${template}.sessions AS s ON s.id = m.template_id
        ORDER BY ${order}`);
    })();
  }
  db.exec("DROP TABLE temp.clone_map");
}
