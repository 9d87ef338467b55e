import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createPostgresDatabase } from "../src/testing/postgres-cluster.js";

/**
 * A fresh, empty database on the run's PostgreSQL server (see global-setup.ts), for one test or
 * one test file: its URL carries the password as a user's would. drop() removes it.
 */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject("pgAdminUrl");
  const name = `agent_lab_test_${randomBytes(6).toString("hex")}`;
  const url = await createPostgresDatabase(adminUrl, name);
  return {
    url,
    name,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
