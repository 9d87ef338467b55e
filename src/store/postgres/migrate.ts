import type pg from "pg";
import { SchemaTooNewError } from "../../domain/errors.js";
import { INDEXES, LAYOUT, PG_SCHEMA_VERSION } from "./schema.js";
import { REBUILD, TRIGGERS } from "./triggers.js";

/**
 * Any 64-bit number the lab alone uses: every opener of the database takes this advisory lock
 * first, so N processes starting at once migrate one after another, and the later ones find the
 * version already current and do nothing.
 */
const MIGRATION_LOCK = 0x61_67_65_6e_74_6c_61_62n; // "agentlab"

const VERSION_TABLE = `CREATE TABLE IF NOT EXISTS agent_lab_schema (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  version INTEGER NOT NULL
)`;

/**
 * Brings the database up to PG_SCHEMA_VERSION in one transaction under `pg_advisory_xact_lock`
 * (released at COMMIT or ROLLBACK, so a crashed opener never leaves it held). The lock is taken
 * before anything is read: reading the version first and locking later is the race the
 * concurrency test catches. Idempotent: every statement is IF NOT EXISTS / OR REPLACE, and a
 * current database is left untouched. `target` names the database in a refusal. True when this
 * call changed the layout (the race test counts them: exactly one opener of a fresh database).
 */
export async function migrate(client: pg.ClientBase, target: string): Promise<boolean> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK.toString()]);
    // Created only when missing: PostgreSQL checks the CREATE privilege even for a table that
    // exists, and a role that may only read (or write rows) must still open an up-to-date lab.
    const exists = await client.query<{ found: boolean }>(
      "SELECT to_regclass('agent_lab_schema') IS NOT NULL AS found",
    );
    if (exists.rows[0]?.found !== true) await client.query(VERSION_TABLE);
    const found = await client.query<{ version: number }>(
      "SELECT version FROM agent_lab_schema WHERE singleton = 1",
    );
    const version = found.rows[0]?.version ?? 0;
    if (version > PG_SCHEMA_VERSION) {
      throw new SchemaTooNewError(target, version, PG_SCHEMA_VERSION);
    }
    const upgrading = version < PG_SCHEMA_VERSION;
    if (upgrading) await upgrade(client);
    await client.query("COMMIT");
    return upgrading;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

async function upgrade(client: pg.ClientBase): Promise<void> {
  for (const statement of LAYOUT) await client.query(statement);
  // As SQLite's migrate.ts: duplicate metric keys must go before the unique index can exist (a
  // table copied or written without it). The lowest id wins: it was recorded first, later
  // copies were retries.
  await client.query(`
    DELETE FROM usage_stats AS later USING usage_stats AS first
    WHERE later.metric_key IS NOT NULL AND later.session_id = first.session_id
      AND later.metric_key = first.metric_key AND later.id > first.id`);
  for (const statement of INDEXES) await client.query(statement);
  for (const statement of TRIGGERS) await client.query(statement);
  // The derived rows are rebuilt from the rows themselves: usage rows may have gone above.
  for (const statement of REBUILD) await client.query(statement);
  await client.query(
    `INSERT INTO agent_lab_schema (singleton, version) VALUES (1, $1)
     ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version`,
    [PG_SCHEMA_VERSION],
  );
}
