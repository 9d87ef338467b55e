import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { distDir, repoRoot } from "../../../test/paths.js";
import { createTestDatabase } from "../../../test/postgres-database.js";
import { PG_SCHEMA_VERSION } from "./schema.js";

const PROCESSES = 8;
/** Each round is a fresh database; an unguarded migration fails within the first one or two. */
const ROUNDS = 2;

interface Outcome {
  ok: boolean;
  migrated?: boolean;
  error?: string;
}

/** The first line a child prints (its readiness, then its outcome). */
function lines(child: ChildProcess): AsyncIterator<string> {
  if (child.stdout === null) throw new Error("child has no stdout");
  return createInterface({ input: child.stdout })[Symbol.asyncIterator]();
}

async function openTogether(url: string): Promise<Outcome[]> {
  const children = Array.from({ length: PROCESSES }, () =>
    spawn(
      process.execPath,
      [join(repoRoot, "test/workers/postgres-store.mjs"), distDir, "open", url],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    ),
  );
  const readers = children.map(lines);
  // Every process has loaded the store before any opens: then all open at the same moment.
  for (const reader of readers) expect((await reader.next()).value).toBe("ready");
  for (const child of children) child.stdin?.write("go\n");
  return Promise.all(
    readers.map(async (reader) => JSON.parse((await reader.next()).value as string) as Outcome),
  );
}

describe("PostgresSessionStore: N processes opening a fresh database at once", () => {
  it(`all ${PROCESSES} succeed, and exactly one creates the schema`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const database = await createTestDatabase();
      try {
        const outcomes = await openTogether(database.url);
        expect(outcomes.filter((outcome) => !outcome.ok)).toStrictEqual([]);
        expect(outcomes.filter((outcome) => outcome.migrated)).toHaveLength(1);
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          const version = await client.query("SELECT version FROM agent_lab_schema");
          expect(version.rows).toStrictEqual([{ version: PG_SCHEMA_VERSION }]);
          const tables = await client.query(
            "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename = 'sessions'",
          );
          expect(tables.rows[0]?.n).toBe(1);
        } finally {
          await client.end();
        }
      } finally {
        await database.drop();
      }
    }
  });
});
