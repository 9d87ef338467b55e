import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { distDir, temporaryDirectory } from "../../test/paths.js";
import { createRaceSession, expectTurnsInSequence } from "../../test/runtime/race-session.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { turnEventsOf } from "./test-fixtures.js";

const SERVERS = 3;
const PER_SERVER = 2;
const ROUNDS = 15;
/** One token for the three servers, as a team would share it through $AGENT_LAB_TOKEN. */
const TOKEN = "race-token-0123456789abcdefghij";

/** `agent-lab --db PATH serve --port 0` on the built package, in its own process. */
function serve(database: string): { child: ChildProcess; url: Promise<string> } {
  const main = pathToFileURL(join(distDir, "cli", "main.js")).href;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { main } = await import(${JSON.stringify(main)}); process.exitCode = await main(process.argv.slice(1));`,
      "--",
      "--db",
      database,
      "serve",
      "--port",
      "0",
    ],
    { env: { ...process.env, AGENT_LAB_TOKEN: TOKEN }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /Agent Lab is running at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, url };
}

describe("several serve processes on one database", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let servers: ChildProcess[] = [];
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(async () => {
    await Promise.all(
      servers.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      ),
    );
    servers = [];
    directory.remove();
  });

  it(`${SERVERS} servers, ${SERVERS * PER_SERVER} turns posted together per round: one turn at a time, the others 409`, async () => {
    const database = join(directory.path, "lab.sqlite3");
    createRaceSession(database);
    const started = Array.from({ length: SERVERS }, () => serve(database));
    servers = started.map((server) => server.child);
    const urls = await Promise.all(started.map((server) => server.url));

    const outcomes: { status: number; body: string }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const posts = urls.flatMap((url, server) =>
        Array.from({ length: PER_SERVER }, async (_, index) => {
          const response = await fetch(new URL("/api/sessions/race/turns", url), {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
            body: JSON.stringify({ message: `round ${round}, server ${server}, post ${index}` }),
          });
          return { status: response.status, body: await response.text() };
        }),
      );
      outcomes.push(...(await Promise.all(posts)));
    }

    const store = new SqliteSessionStore(database);
    try {
      const turns = store.listTurns("race");
      expectTurnsInSequence(turns);
      expect(store.listMessages("race").map((message) => message.role)).toEqual(
        turns.flatMap(() => ["user", "assistant"]),
      );
      expect(turns.every((turn) => turn.status === "completed")).toBe(true);
      const ran = outcomes.filter((outcome) => outcome.status === 200);
      expect(turns).toHaveLength(ran.length);
      expect(ran.length).toBeGreaterThanOrEqual(ROUNDS);
      for (const outcome of ran) {
        expect(turnEventsOf(outcome.body).at(-1)).toMatchObject({
          type: "turn_end",
          status: "completed",
        });
      }
      for (const outcome of outcomes.filter((outcome) => outcome.status !== 200)) {
        expect(outcome.status).toBe(409);
        expect(JSON.parse(outcome.body)).toMatchObject({
          error: {
            code: "turn_in_progress",
            message: expect.stringContaining("session race already has a turn running"),
          },
        });
      }
    } finally {
      store.close();
    }
  }, 120_000);
});
