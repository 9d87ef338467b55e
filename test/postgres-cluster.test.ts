import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { distDir } from "./paths.js";
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

  it.each(["SIGINT", "SIGTERM"] as const)(
    "is stopped and removed when the process that started it gets %s (Ctrl-C or a timeout on a test run)",
    async (signal) => {
      const script = `
        const { startPostgresCluster } = await import(${JSON.stringify(`${distDir}/testing/postgres-cluster.js`)});
        const cluster = await startPostgresCluster();
        console.log(JSON.stringify({ url: cluster.adminUrl }));
        setInterval(() => {}, 1000);`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      try {
        const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
        const { url } = JSON.parse((await lines.next()).value as string) as { url: string };
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        const shown = await client.query<{ data_directory: string }>("SHOW data_directory");
        const folder = shown.rows[0]?.data_directory as string;
        await client.end();
        expect(existsSync(folder)).toBe(true);
        child.kill(signal);
        const [code] = await once(child, "exit");
        expect(code).toBe(signal === "SIGINT" ? 130 : 143);
        expect(existsSync(folder)).toBe(false);
        const late = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
        await expect(late.connect()).rejects.toThrow(/ECONNREFUSED/);
        await late.end().catch(() => {});
      } finally {
        // A failed check must not leave the child's server behind either.
        child.kill("SIGTERM");
      }
    },
    60_000,
  );
});
