import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/postgres-database.js";
import { findExperimentRuns } from "../experiments/experiment-runs.js";
import { PostgresSessionStore } from "../store/postgres/postgres-session-store.js";
import { freshLab, runCli, startCli, stderrLines } from "./test-fixtures.js";
import {
  checkExactlyOnce,
  SLOW_SUITE,
  stderrShows,
  untilHoldingClaims,
  workerPid,
} from "./workers/test-fixtures.js";

/** `bench --workers` and `worker` on PostgreSQL: the claims are FOR UPDATE SKIP LOCKED. */

const lab = freshLab();
let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await database.drop();
});

async function runsOf(experimentId: string) {
  const store = await PostgresSessionStore.open(database.url);
  try {
    return await findExperimentRuns(store, experimentId);
  } finally {
    await store.close();
  }
}

function writeSuite(): string {
  const path = join(lab.folder, "slow.yaml");
  writeFileSync(path, SLOW_SUITE);
  return path;
}

const experimentOf = (stderr: string) => /experiment (slow-[0-9a-f]{8})/.exec(stderr)?.[1] ?? "";

describe("agent-lab bench --workers on PostgreSQL", () => {
  it("survives a worker killed with SIGKILL mid-run: every run finished exactly once", async () => {
    const suite = writeSuite();
    const running = startCli([
      "--db",
      database.url,
      "bench",
      suite,
      "--workers",
      "4",
      "--lease",
      "1",
    ]);
    const text = await stderrShows(running).until(/\] [1-9]\d*\/48 runs/);
    const pid = workerPid(text, 3);
    await untilHoldingClaims(pid, async (pattern) => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ count: string }>(
          "SELECT count(*) FROM queued_runs WHERE state = 'claimed' AND worker LIKE $1",
          [pattern],
        );
        return Number(rows[0]?.count ?? 0);
      } finally {
        await client.end();
      }
    });
    process.kill(pid, "SIGKILL");
    const result = await running.result;
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(`worker 3 (pid ${pid}) was ended by SIGKILL`);
    const reclaimed = Number(
      /(\d+) runs? (?:was|were) claimed more than once/.exec(result.stderr)?.[1],
    );
    expect(reclaimed).toBeGreaterThanOrEqual(1);
    // The URL's password reaches the workers in their environment, never on a printed line.
    const password = new URL(database.url).password;
    expect(password.length).toBeGreaterThan(0);
    expect(result.stderr).not.toContain(password);
    // Nothing but the lab's own lines: no driver warning from any process (the workers' too).
    expect(result.stderr).not.toMatch(/Warning/);
    checkExactlyOnce(await runsOf(experimentOf(result.stderr)), 48);
  });

  it("resumes across workers: a stopped bench, then a worker that joins by experiment id", async () => {
    const suite = writeSuite();
    const running = startCli(["--db", database.url, "bench", suite, "--workers", "2"]);
    await stderrShows(running).until(/\] [1-9]\d*\/48 runs/);
    running.child.kill("SIGTERM");
    const stopped = await running.result;
    expect(stopped.status, stopped.stderr).toBe(143);
    expect(stderrLines(stopped).at(-1)).toMatch(/^stopped: \d+ of 48 runs finished; /);
    const experimentId = experimentOf(stopped.stderr);

    const joined = await runCli(["--db", database.url, "worker", "--experiment", experimentId]);
    expect(joined.status, joined.stderr).toBe(0);
    expect(stderrLines(joined).at(-1)).toMatch(
      /; experiment slow-[0-9a-f]{8}: 48 of 48 runs done$/,
    );
    expect(`${stopped.stderr}${joined.stderr}`).not.toMatch(/Warning/);
    checkExactlyOnce(await runsOf(experimentId), 48);
  });
});
