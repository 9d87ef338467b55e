import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveDatabasePath } from "./database-path.js";

describe("resolveDatabasePath", () => {
  it("prefers --db, then $AGENT_LAB_DB", () => {
    const env = { AGENT_LAB_DB: "/env/lab.db", XDG_DATA_HOME: "/xdg" };
    expect(resolveDatabasePath("flag.db", env)).toEqual({
      path: "flag.db",
      is_default: false,
      label: "flag.db",
      is_postgres: false,
    });
    expect(resolveDatabasePath(undefined, env)).toMatchObject({
      path: "/env/lab.db",
      is_default: false,
    });
  });

  it("defaults to the XDG data folder, else ~/.local/share", () => {
    expect(
      resolveDatabasePath(undefined, { XDG_DATA_HOME: "/xdg", HOME: "/home/u" }),
    ).toMatchObject({
      path: "/xdg/agent-lab/lab.sqlite3",
      is_default: true,
    });
    expect(resolveDatabasePath(undefined, { HOME: "/home/u" }).path).toBe(
      "/home/u/.local/share/agent-lab/lab.sqlite3",
    );
    // A relative XDG_DATA_HOME is invalid by the spec, and an empty variable is an unset one.
    expect(resolveDatabasePath(undefined, { XDG_DATA_HOME: "rel", AGENT_LAB_DB: "" }).path).toBe(
      join(homedir(), ".local/share/agent-lab/lab.sqlite3"),
    );
  });

  it("takes a PostgreSQL URL from --db or $AGENT_LAB_DB, shown without its password", () => {
    const url = "postgres://lab:hunter2@127.0.0.1:5432/lab";
    for (const location of [
      resolveDatabasePath(url, {}),
      resolveDatabasePath(undefined, { AGENT_LAB_DB: ` ${url} ` }),
    ]) {
      expect(location).toEqual({
        path: url,
        is_default: false,
        label: "postgres://lab:***@127.0.0.1:5432/lab",
        is_postgres: true,
      });
    }
  });

  it("refuses a SQLite URI, which the driver would take for a file of that name, saying where it came from", () => {
    expect(() => resolveDatabasePath("file::memory:", {})).toThrow(
      /^--db: "file::memory:" is a SQLite URI, which agent-lab would take for a file of that name/,
    );
    expect(() => resolveDatabasePath(undefined, { AGENT_LAB_DB: "FILE:lab.db?mode=ro" })).toThrow(
      /^\$AGENT_LAB_DB: "FILE:lab.db\?mode=ro" is a SQLite URI/,
    );
    // A path that only contains the word is a path.
    expect(resolveDatabasePath("./file:notes/lab.db", {}).path).toBe("./file:notes/lab.db");
  });

  it("refuses a mistyped PostgreSQL URL instead of opening a SQLite file of that name, its password hidden", () => {
    for (const url of [
      "postgress://lab:S3cret!x@127.0.0.1:5291/lab",
      "pg://lab:S3cret!x@127.0.0.1:5291/lab",
      "postgres:/lab:S3cret!x@127.0.0.1:5291/lab",
    ]) {
      const refusal = () => resolveDatabasePath(url, {});
      expect(refusal).toThrow(
        /^--db: agent-lab cannot open ".*lab:\*\*\*@127\.0\.0\.1:5291\/lab": a PostgreSQL URL begins with postgres:\/\//,
      );
      expect(refusal).not.toThrow(/S3cret/);
    }
    expect(() => resolveDatabasePath("postgress://bob@db/lab?password=hunter2", {})).toThrow(
      /cannot open "postgress:\/\/bob@db\/lab\?password=\*\*\*"/,
    );
    // A drive letter is a path.
    expect(resolveDatabasePath("C:/labs/lab.sqlite3", {}).path).toBe("C:/labs/lab.sqlite3");
  });
});

describe("an unparsable PostgreSQL URL, in any command", () => {
  it("is named without its password, with a hint at percent-encoding, by reading commands, run and worker alike", async () => {
    const { runCli } = await import("./test-fixtures.js");
    // A `#` in a password ends the URL's authority there: the port is then not a number.
    const url = "postgres://pw:Se#cret-77@127.0.0.1:5433/labpw";
    const expected =
      "agent-lab: cannot open a database at an unparsable URL (postgres://pw:***@127.0.0.1:5433/labpw): Invalid URL (if a user name or password holds #, /, ?, @ or %, percent-encode it, # as %23, or give the password in $PGPASSWORD or ~/.pgpass) (ERR_INVALID_URL)\n";
    for (const args of [["sessions"], ["show", "s"], ["usage", "s"], ["run", "hello"]]) {
      const result = await runCli(["--db", url, ...args]);
      expect({ args, status: result.status, stderr: result.stderr }).toEqual({
        args,
        status: 1,
        stderr: expected,
      });
    }
    const worker = await runCli(["worker", "--experiment", "x"], { AGENT_LAB_DB: url });
    expect(worker.status).toBe(1);
    expect(worker.stderr).toBe(expected);
  });
});
