import { describe, expect, it } from "vitest";
import { isPostgresUrl, redactDatabaseUrl, scrubDatabaseSecrets } from "./database-url.js";

describe("isPostgresUrl", () => {
  it("takes postgres:// and postgresql:// URLs, and nothing else", () => {
    expect(isPostgresUrl("postgres://u@h/db")).toBe(true);
    expect(isPostgresUrl("postgresql://u@h/db")).toBe(true);
    expect(isPostgresUrl("POSTGRES://u@h/db")).toBe(true);
    expect(isPostgresUrl("lab.sqlite3")).toBe(false);
    expect(isPostgresUrl("./postgres://x")).toBe(false);
    expect(isPostgresUrl(":memory:")).toBe(false);
    expect(isPostgresUrl("mysql://u@h/db")).toBe(false);
  });
});

describe("redactDatabaseUrl", () => {
  it("hides the password and keeps the rest", () => {
    expect(redactDatabaseUrl("postgres://lab:s3cret@db.example:5432/lab")).toBe(
      "postgres://lab:***@db.example:5432/lab",
    );
    expect(redactDatabaseUrl("postgresql://lab@db.example/lab")).toBe(
      "postgresql://lab@db.example/lab",
    );
    expect(redactDatabaseUrl("postgres://db.example/lab")).toBe("postgres://db.example/lab");
  });

  it("hides a password holding @, / or : and a password= parameter", () => {
    const shown = redactDatabaseUrl("postgres://lab:p@ss/w:rd@127.0.0.1:5/lab?sslmode=disable");
    expect(shown).toBe("postgres://lab:***@127.0.0.1:5/lab?sslmode=disable");
    expect(redactDatabaseUrl("postgres://h/lab?user=x&password=hunter2&sslmode=require")).toBe(
      "postgres://h/lab?user=x&password=***&sslmode=require",
    );
  });

  it("hides a password holding ?, # or / (the user info ends at the URL's last @)", () => {
    for (const password of ["pa?ss", "pa#ss", "p/a?s#s", "a?b@c"]) {
      const url = `postgres://lab:${password}@127.0.0.1:1/db?sslmode=disable`;
      expect(redactDatabaseUrl(url)).toBe("postgres://lab:***@127.0.0.1:1/db?sslmode=disable");
      expect(scrubDatabaseSecrets(`cannot open ${url}: ${password}`, url)).not.toContain(password);
    }
    // An "@" in the query hides more than the password, never less.
    expect(redactDatabaseUrl("postgres://lab:pw@h/db?application_name=a@b")).not.toContain("pw");
  });

  it("returns a path as given", () => {
    expect(redactDatabaseUrl("/tmp/lab:1@x.sqlite3")).toBe("/tmp/lab:1@x.sqlite3");
  });
});

describe("scrubDatabaseSecrets", () => {
  it("leaves a password that is part of a longer word, so the message still reads and tells nothing", () => {
    const message =
      'password authentication failed for user "lab" at 127.0.0.1: Connection terminated unexpectedly';
    for (const password of ["e", "x", "ed", "thent"]) {
      const url = `postgres://lab:${password}@127.0.0.1:5432/lab2`;
      expect(scrubDatabaseSecrets(message, url)).toBe(message);
    }
    // Standing alone, it goes, however short and whatever it holds.
    const url = "postgres://lab:a.b*c@127.0.0.1:5432/lab";
    expect(scrubDatabaseSecrets("sent a.b*c, (a.b*c)", url)).toBe("sent ***, (***)");
    // A password whose edge is a symbol goes even where it follows a word.
    const symbols = "postgres://lab:-x9Qz!@127.0.0.1:5432/lab";
    expect(scrubDatabaseSecrets("failed for lab-x9Qz!", symbols)).toBe("failed for lab***");
  });

  it("removes the password, raw and decoded, from a message", () => {
    const url = "postgres://lab:p%40ss@127.0.0.1/lab?password=other";
    expect(scrubDatabaseSecrets("auth p%40ss p@ss other failed", url)).toBe(
      "auth *** *** *** failed",
    );
  });
});
