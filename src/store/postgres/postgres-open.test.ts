import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closedLoopbackPort } from "../../../test/closed-port.js";
import { createTestDatabase, type TestDatabase } from "../../../test/postgres-database.js";
import { DatabaseOpenError, SchemaTooNewError } from "../../domain/errors.js";
import { PostgresSessionStore } from "./postgres-session-store.js";
import { PG_SCHEMA_VERSION } from "./schema.js";

async function sql<Row extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as Error,
  );

describe("PostgresSessionStore.open", () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(() => database.drop());

  it("refuses a wrong password naming host:port and the database, never the password", async () => {
    const url = new URL(database.url);
    const password = "Wr0ng-p@ss:word/secret";
    url.password = encodeURIComponent(password);
    const error = await refusal(PostgresSessionStore.open(url.toString()));
    expect(error).toBeInstanceOf(DatabaseOpenError);
    const message = error?.message ?? "";
    expect(message).toContain(`${url.hostname}:${url.port}`);
    expect(message).toContain(database.name);
    expect(message).toMatch(/password authentication failed/);
    for (const spelling of [password, url.password, new URL(database.url).password]) {
      expect(message).not.toContain(spelling);
      expect(JSON.stringify(error)).not.toContain(spelling);
      expect(String(error?.stack)).not.toContain(spelling);
    }
  });

  it("refuses a wrong password given as a password= parameter, showing the URL with *** for it", async () => {
    const url = new URL(database.url);
    url.password = "";
    const secret = "Qu3ry-param-secret";
    url.searchParams.set("password", secret);
    const error = await refusal(PostgresSessionStore.open(url.toString()));
    expect(error).toBeInstanceOf(DatabaseOpenError);
    expect(error?.message).toMatch(/password authentication failed/);
    expect(error?.message).toContain(`?password=***)`);
    expect(error?.message).not.toContain(secret);
    expect(String(error?.stack)).not.toContain(secret);
  });

  it("refuses an unreachable port with a clear error, without the password", async () => {
    const url = new URL(database.url);
    url.port = String(await closedLoopbackPort());
    const error = await refusal(PostgresSessionStore.open(url.toString()));
    expect(error).toBeInstanceOf(DatabaseOpenError);
    expect(error?.message).toContain(
      `cannot open database ${database.name} on 127.0.0.1:${url.port}`,
    );
    expect(error?.message).toMatch(/ECONNREFUSED/);
    expect(error?.message).not.toContain(url.password);
  });

  it("names the server the environment chose when the URL leaves host or port out", async () => {
    const url = new URL(database.url);
    const port = String(await closedLoopbackPort());
    const names = ["PGHOST", "PGPORT", "PGUSER", "PGPASSWORD"];
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
    process.env.PGPORT = port;
    try {
      url.port = "";
      const error = await refusal(PostgresSessionStore.open(url.toString()));
      expect(error?.message).toContain(
        `cannot open database ${database.name} on 127.0.0.1:${port}`,
      );
      // Nothing but the database in the URL: the rest from the environment, as psql takes it.
      process.env.PGHOST = "127.0.0.1";
      process.env.PGUSER = decodeURIComponent(url.username);
      process.env.PGPASSWORD = decodeURIComponent(url.password);
      const refused = await refusal(PostgresSessionStore.open(`postgres:///${database.name}`));
      expect(refused?.message).toContain(
        `cannot open database ${database.name} on 127.0.0.1:${port}`,
      );
      expect(refused?.message).not.toContain(decodeURIComponent(url.password));
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("migrates once: a second open finds the schema current and changes nothing", async () => {
    const first = await PostgresSessionStore.open(database.url);
    expect(first.migrated).toBe(true);
    const id = await first.createSession({ title: "kept", config: {} });
    await first.close();
    const second = await PostgresSessionStore.open(database.url);
    try {
      expect(second.migrated).toBe(false);
      expect((await second.getSession(id))?.title).toBe("kept");
    } finally {
      await second.close();
    }
    expect(await sql(database.url, "SELECT version FROM agent_lab_schema")).toStrictEqual([
      { version: PG_SCHEMA_VERSION },
    ]);
  });

  it("upgrades a version-1 database to the list's covering index; the list's JIT setting stays in its transaction", async () => {
    const first = await PostgresSessionStore.open(database.url);
    for (const id of ["a", "b", "c"]) {
      await first.createSession({ title: `title ${id}`, config: {}, session_id: id });
    }
    const before = await first.listSessions();
    await first.close();
    // As version 1 left it: the order-only index.
    await sql(database.url, "DROP INDEX sessions_listed");
    await sql(database.url, "CREATE INDEX sessions_updated ON sessions (updated_at DESC, id DESC)");
    await sql(database.url, "UPDATE agent_lab_schema SET version = 1");
    const store = await PostgresSessionStore.open(database.url);
    try {
      expect(store.migrated).toBe(true);
      expect(await store.listSessions()).toStrictEqual(before);
      const indexes = await sql<{ indexname: string; indexdef: string }>(
        database.url,
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'sessions' AND indexname IN ('sessions_listed', 'sessions_updated')",
      );
      expect(indexes.map((index) => index.indexname)).toStrictEqual(["sessions_listed"]);
      expect(indexes[0]?.indexdef).toContain("INCLUDE (title, created_at, turn_count)");
      expect(await store.listSessionOverviews()).toHaveLength(3);
      // The lists ran with `jit = off` for their transaction only: a pooled connection (behind
      // a pooler, a server connection others share) keeps the server's setting.
      const clients = await Promise.all([store.pool.connect(), store.pool.connect()]);
      try {
        for (const client of clients) {
          expect((await client.query("SHOW jit")).rows).toStrictEqual([{ jit: "on" }]);
        }
      } finally {
        for (const client of clients) client.release();
      }
    } finally {
      await store.close();
    }
  });

  it("opens an up-to-date lab as a role that may only read (no CREATE on the schema)", async () => {
    const writer = await PostgresSessionStore.open(database.url);
    await writer.createSession({ session_id: "s", title: "kept" });
    await writer.close();
    const role = `reader_${database.name.slice(-12)}`;
    await sql(database.url, `CREATE ROLE ${role} LOGIN PASSWORD 'read-only-pw'`);
    try {
      await sql(database.url, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
      await sql(database.url, `GRANT USAGE ON SCHEMA public TO ${role}`);
      await sql(database.url, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
      const url = new URL(database.url);
      url.username = role;
      url.password = "read-only-pw";
      const reader = await PostgresSessionStore.open(url.toString());
      try {
        expect((await reader.listSessions()).map((session) => session.title)).toEqual(["kept"]);
      } finally {
        await reader.close();
      }
    } finally {
      await sql(database.url, `REASSIGN OWNED BY ${role} TO CURRENT_USER`);
      await sql(database.url, `DROP OWNED BY ${role}`);
      await sql(database.url, `DROP ROLE ${role}`);
    }
  });

  it("refuses a database written by a newer schema, leaving it untouched", async () => {
    await (await PostgresSessionStore.open(database.url)).close();
    await sql(database.url, "UPDATE agent_lab_schema SET version = $1", [PG_SCHEMA_VERSION + 1]);
    const error = await refusal(PostgresSessionStore.open(database.url));
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error?.message).toContain(`database ${database.name} on`);
    expect(await sql(database.url, "SELECT version FROM agent_lab_schema")).toStrictEqual([
      { version: PG_SCHEMA_VERSION + 1 },
    ]);
  });

  it("drops duplicate metric keys (the first recorded wins) before the unique index, then rolls up what is left", async () => {
    // A database whose usage table lost its unique index (a hand copy, an interrupted restore)
    // and holds retried calls twice: the migration must dedupe before it can index.
    const store = await PostgresSessionStore.open(database.url);
    const id = await store.createSession({ title: "dupes", config: {} });
    await store.startTurn(id, { turn_index: 1, user_message: "u" });
    await store.completeTurn(id, { turn_index: 1, wall_time_ms: 1 });
    await store.close();
    await sql(database.url, "DROP INDEX usage_stats_metric_key_uq");
    for (const [key, tokens] of [
      ["chat:1:1", 10],
      ["chat:1:1", 20],
      [null, 1],
      [null, 2],
    ] as const) {
      await sql(
        database.url,
        `INSERT INTO usage_stats (session_id, turn_index, round_index, prompt_tokens,
          completion_tokens, total_tokens, cached_tokens, elapsed_ms, created_at, metric_key)
         VALUES ($1, 1, 1, $2, 0, $2, 0, 1, 'now', $3)`,
        [id, tokens, key],
      );
    }
    await sql(database.url, "UPDATE agent_lab_schema SET version = 0");

    const reopened = await PostgresSessionStore.open(database.url);
    try {
      expect(reopened.migrated).toBe(true);
      const usage = await reopened.usageSummary(id);
      expect(usage.calls.map((call) => [call.metric_key, call.total_tokens])).toStrictEqual([
        ["chat:1:1", 10],
        [null, 1],
        [null, 2],
      ]);
      expect(usage.session.total_tokens).toBe(13);
      expect((await reopened.listSessions())[0]?.total_tokens).toBe(13);
      // The index is back: a retry of the key inserts nothing.
      expect(
        await reopened.appendUsage(id, {
          turn_index: 1,
          round_index: 1,
          usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5, cached_tokens: 0 },
          elapsed_ms: 1,
          metadata: { metric_key: "chat:1:1" },
        }),
      ).toBe(false);
    } finally {
      await reopened.close();
    }
  });
});
