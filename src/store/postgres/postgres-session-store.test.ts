import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { describeSessionStoreContract } from "../session-store.contract.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

/**
 * Every contract suite SQLite runs (seed twins, transfer, record batch, pages, claims, call
 * detail, experiment records), against PostgreSQL. One database for the file (creating one per
 * test cost ~1 s each); each test opens the store on it (the schema is already current) and
 * leaves it empty again: every table truncated with its identities restarted, as fresh.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

async function onDatabase(text: string): Promise<void> {
  const connection = new pg.Client({ connectionString: database.url });
  await connection.connect();
  try {
    await connection.query(text);
  } finally {
    await connection.end();
  }
}

describeSessionStoreContract("PostgresSessionStore", async () => ({
  store: await PostgresSessionStore.open(database.url, { application_name: "contract" }),
  // The seed's fault injection: a second connection adds a trigger behind the store's back.
  rejectToolMessages: () =>
    onDatabase(`
      CREATE FUNCTION reject_tool_message() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'tool blocked'; END $$;
      CREATE TRIGGER reject_tool_message BEFORE INSERT ON messages FOR EACH ROW
      WHEN (NEW.role = 'tool') EXECUTE FUNCTION reject_tool_message();`),
  cleanup: () =>
    onDatabase(`
      DROP TRIGGER IF EXISTS reject_tool_message ON messages;
      DROP FUNCTION IF EXISTS reject_tool_message();
      TRUNCATE sessions, turns, messages, audit_logs, usage_stats, call_payloads, turn_usage,
        experiment_summaries RESTART IDENTITY;`),
}));
