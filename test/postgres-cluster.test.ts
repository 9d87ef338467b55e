import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "./postgres-database.js";

describe("the tests' throwaway PostgreSQL", () => {
  it("gives each caller its own empty database, reachable with the password in the URL only", async () => {
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    try {
      expect(first.name).not.toBe(second.name);
      const client = new pg.Client({ connectionString: first.url });
      await client.connect();
      try {
        const version = await client.query<{ server_version_num: string }>(
          "SHOW server_version_num",
        );
        expect(Number(version.rows[0]?.server_version_num)).toBeGreaterThanOrEqual(150000);
        await client.query("CREATE TABLE t (x int)");
      } finally {
        await client.end();
      }
      const wrong = new URL(second.url);
      wrong.password = "not-the-password";
      const refused = new pg.Client({ connectionString: wrong.toString() });
      await expect(refused.connect()).rejects.toThrow(/password authentication failed/);
      await refused.end().catch(() => {});
    } finally {
      await first.drop();
      await second.drop();
    }
  });
});
