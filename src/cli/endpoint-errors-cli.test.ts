import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { closedLoopbackPort } from "../../test/closed-port.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli } from "./test-fixtures.js";

/**
 * `run` against endpoints that cannot work: a missing key is refused before anything is stored or
 * sent; a refused connection fails the turn with the URL named and says how to remove the session.
 */

const lab = freshLab();
// Empty is unset, for the adapter as for a shell (`OPENAI_API_KEY= agent-lab …`).
const NO_KEY = { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" };

function storedSessions(): number {
  if (!existsSync(lab.db)) return 0;
  const store = new SqliteSessionStore(lab.db);
  try {
    return store.listSessions().length;
  } finally {
    store.close();
  }
}

describe("agent-lab run: endpoints that cannot work", () => {
  it("a missing key is said up front, and no session is left", async () => {
    const result = await runCli(
      ["--db", lab.db, "run", "--model", "openai:gpt-4.1-mini", "hello"],
      NO_KEY,
    );
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      "`OPENAI_API_KEY` is not set; the endpoint at https://api.openai.com/v1 needs a key",
    );
    expect(result.stdout).toBe("");
    expect(storedSessions()).toBe(0);
  });

  it("a refused connection names the URL, after two attempts, and says how to delete the session", async () => {
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/v1`;
    const result = await runCli(
      [
        "--db",
        lab.db,
        "run",
        "--mode",
        "chat_agent_tools",
        "--model",
        "openai:m",
        "--base-url",
        url,
        "hi",
      ],
      NO_KEY,
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `agent-lab: connection refused at ${url}: is the server running? (after 2 attempts)`,
    );
    expect(result.stderr).toMatch(
      /agent-lab: session (\S+) holds only this failed turn; remove it with: agent-lab delete \1 --yes/,
    );
    expect(storedSessions()).toBe(1);
  });
});
