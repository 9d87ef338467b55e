import pg from "pg";
import { createTestDatabase } from "../../../test/postgres-database.js";
import { describeSessionStoreContract } from "../session-store.contract.js";
import { PostgresSessionStore } from "./postgres-session-store.js";

// Every contract suite SQLite runs (seed twins, transfer, record batch, pages, claims, call
// detail, experiment records), against PostgreSQL: a fresh database per test, dropped after.
describeSessionStoreContract("PostgresSessionStore", async () => {
  const database = await createTestDatabase();
  const store = await PostgresSessionStore.open(database.url, { application_name: "contract" });
  return {
    store,
    rejectToolMessages: async () => {
      // The seed's fault injection: a second connection adds a trigger behind the store's back.
      const connection = new pg.Client({ connectionString: database.url });
      await connection.connect();
      try {
        await connection.query(`
          CREATE FUNCTION reject_tool_message() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'tool blocked'; END $$;
          CREATE TRIGGER reject_tool_message BEFORE INSERT ON messages FOR EACH ROW
          WHEN (NEW.role = 'tool') EXECUTE FUNCTION reject_tool_message();`);
      } finally {
        await connection.end();
      }
    },
    cleanup: () => database.drop(),
  };
});
