import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/postgres-database.js";
import { freshLab, runCli } from "./test-fixtures.js";

/**
 * A PostgreSQL password kept where libpq keeps it, ~/.pgpass (here $PGPASSFILE): the URL names no
 * password, and every command works without a word about it on stderr (pg reading the file
 * itself printed a DeprecationWarning on every command).
 */

const lab = freshLab();
let database: TestDatabase;
beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(() => database.drop());

describe("a password from the password file", () => {
  it("opens the lab with it, writes and reads, and prints no warning", async () => {
    const url = new URL(database.url);
    const passFile = join(lab.folder, "pgpass");
    writeFileSync(
      passFile,
      `${url.hostname}:${url.port}:${database.name}:${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}\n`,
    );
    chmodSync(passFile, 0o600);
    url.password = "";
    const env = { PGPASSFILE: passFile, PGPASSWORD: undefined };
    const run = await runCli(["--db", url.href, "run", "--new", "search for owls"], env);
    expect(run.stderr).not.toContain("Warning");
    expect(run.status).toBe(0);
    const list = await runCli(["--db", url.href, "sessions"], env);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain("search for owls");
    expect(list.stderr).toBe("");
  });

  it("without the file's entry, the server's refusal names the database and no password", async () => {
    const url = new URL(database.url);
    url.password = "";
    const passFile = join(lab.folder, "empty-pgpass");
    writeFileSync(passFile, "");
    chmodSync(passFile, 0o600);
    const refused = await runCli(["--db", url.href, "sessions"], {
      PGPASSFILE: passFile,
      PGPASSWORD: undefined,
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(database.name);
    expect(refused.stderr).not.toContain("Warning");
  });
});
