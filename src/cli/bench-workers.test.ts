import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { findExperimentRuns } from "../experiments/experiment-runs.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { type CliResult, freshLab, runCli, startCli, stderrLines } from "./test-fixtures.js";
import {
  checkExactlyOnce,
  SLOW_SUITE,
  stderrShows,
  untilHoldingClaims,
  workerPid,
} from "./workers/test-fixtures.js";

/** `bench --workers` and `worker` on one SQLite file (the PostgreSQL twin: bench-workers-postgres). */

const lab = freshLab();

function writeSuite(): string {
  const path = join(lab.folder, "slow.yaml");
  writeFileSync(path, SLOW_SUITE);
  return path;
}

async function runsOf(experimentId: string) {
  const store = new SqliteSessionStore(lab.db);
  try {
    return await findExperimentRuns(store, experimentId);
  } finally {
    store.close();
  }
}

const experimentOf = (result: Pick<CliResult, "stderr">) =>
  /experiment (slow-[0-9a-f]{8})/.exec(result.stderr)?.[1] ?? "";

describe("agent-lab bench --workers on SQLite", () => {
  it("survives a worker killed with SIGKILL mid-run: every run finished exactly once", async () => {
    const suite = writeSuite();
    const running = startCli(["--db", lab.db, "bench", suite, "--workers", "4", "--lease", "1"]);
    const shown = stderrShows(running);
    const text = await shown.until(/\] [1-9]\d*\/48 runs/);
    const pid = workerPid(text, 2);
    await untilHoldingClaims(pid, (pattern) => {
      const db = new Database(lab.db, { readonly: true, fileMustExist: true });
      try {
        db.pragma("busy_timeout = 5000");
        const row = db
          .prepare(
            "SELECT count(*) AS count FROM queued_runs WHERE state = 'claimed' AND worker LIKE ?",
          )
          .get(pattern) as { count: number };
        return row.count;
      } finally {
        db.close();
      }
    });
    process.kill(pid, "SIGKILL");
    const result = await running.result;
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(`worker 2 (pid ${pid}) was ended by SIGKILL`);
    // The killed worker held runs (each worker keeps two going): they were claimed again.
    const reclaimed = Number(
      /(\d+) runs? (?:was|were) claimed more than once/.exec(result.stderr)?.[1],
    );
    expect(reclaimed).toBeGreaterThanOrEqual(1);
    expect(result.stdout).toMatch(/^chat_agent_tools · sim +24 /m);
    expect(result.stdout).toMatch(/^dual_agent · sim +24 /m);
    checkExactlyOnce(await runsOf(experimentOf(result)), 48);
  });

  it("its workers give their runs back and exit when the bench itself is killed outright", async () => {
    const suite = writeSuite();
    const running = startCli(["--db", lab.db, "bench", suite, "--workers", "2"]);
    const text = await stderrShows(running).until(/\] [1-9]\d*\/48 runs/);
    const pids = [workerPid(text, 1), workerPid(text, 2)];
    // SIGKILL: no handler runs, no SIGTERM is forwarded; only the closed pipes tell the workers.
    running.child.kill("SIGKILL");
    await running.result;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 30_000;
    while (pids.some(alive) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pids.filter(alive)).toStrictEqual([]);
    const db = new Database(lab.db, { readonly: true, fileMustExist: true });
    try {
      db.pragma("busy_timeout = 5000");
      const states = db
        .prepare("SELECT state, count(*) AS count FROM queued_runs GROUP BY state ORDER BY state")
        .all() as { state: string; count: number }[];
      // Given back, not left claimed for their leases to lapse; and not run to the end.
      expect(states.find((row) => row.state === "claimed")).toBeUndefined();
      expect(states.find((row) => row.state === "pending")?.count).toBeGreaterThan(0);
    } finally {
      db.close();
    }
    // What they gave back, a resume finishes: every run exactly once.
    const resumed = await runCli(["--db", lab.db, "bench", suite, "--workers", "2"]);
    expect(resumed.status, resumed.stderr).toBe(0);
    checkExactlyOnce(await runsOf(experimentOf(resumed)), 48);
  });

  it("resumes across workers: a stopped bench, then a worker joining by id alone, then bench reports", async () => {
    const suite = writeSuite();
    const running = startCli(["--db", lab.db, "bench", suite, "--workers", "2"]);
    await stderrShows(running).until(/\] [1-9]\d*\/48 runs/);
    running.child.kill("SIGINT");
    const stopped = await running.result;
    expect(stopped.status, stopped.stderr).toBe(130);
    const stopLine = stderrLines(stopped).at(-1) ?? "";
    expect(stopLine).toMatch(/^stopped: \d+ of 48 runs finished; run the same command again/);
    // Each worker gave its runs back instead of leaving them to lapse, and said so once named.
    expect(stopped.stderr).toMatch(/given back unfinished/);
    const forwarded = stderrLines(stopped).filter((line) => /worker \d+: /.test(line));
    expect(forwarded.some((line) => line.includes("given back unfinished"))).toBe(true);
    for (const line of forwarded) expect(line).not.toMatch(/worker \d+: agent-lab: /);
    const experimentId = experimentOf(stopped);

    // Another "host": only the database and the experiment id.
    const joined = await runCli(["--db", lab.db, "worker", "--experiment", experimentId]);
    expect(joined.status, joined.stderr).toBe(0);
    const summary = stderrLines(joined).at(-1) ?? "";
    expect(summary).toMatch(
      /runs? finished here .*; experiment slow-[0-9a-f]{8}: 48 of 48 runs done$/,
    );
    const finishedBefore = Number(/stopped: (\d+)/.exec(stopLine)?.[1]);
    const ranHere = Number(/: (\d+) runs? finished here/.exec(summary)?.[1]);
    expect(finishedBefore + ranHere).toBe(48);

    const reported = await runCli(["--db", lab.db, "bench", suite, "--workers", "3"]);
    expect(reported.status, reported.stderr).toBe(0);
    expect(stderrLines(reported)[0]).toBe(
      `experiment ${experimentId}: 48 runs on 3 workers (all already finished: reporting)`,
    );
    expect(reported.stderr).not.toContain("started (pid");
    checkExactlyOnce(await runsOf(experimentId), 48);
  });

  it("takes a worker that joins late, with the suite file, from another process", async () => {
    const suite = writeSuite();
    const running = startCli(["--db", lab.db, "bench", suite, "--workers", "1"]);
    await stderrShows(running).until(/\] [1-9]\d*\/48 runs/);
    const late = await runCli(["--db", lab.db, "worker", suite, "--concurrency", "3"]);
    const result = await running.result;
    expect(result.status, result.stderr).toBe(0);
    expect(late.status, late.stderr).toBe(0);
    const ranLate = Number(/: (\d+) runs? finished here/.exec(late.stderr)?.[1]);
    expect(ranLate).toBeGreaterThanOrEqual(1);
    const ranFirst = Number(/worker 1: .*: (\d+) runs? finished here/.exec(result.stderr)?.[1]);
    expect(ranFirst + ranLate).toBe(48);
    checkExactlyOnce(await runsOf(experimentOf(result)), 48);
  });

  it("says how many runs could not run apart from the ones done", async () => {
    new SqliteSessionStore(lab.db).close();
    const refuse = new Database(lab.db);
    refuse.exec(`
      CREATE TRIGGER refuse_answers BEFORE INSERT ON messages WHEN NEW.role = 'assistant'
      BEGIN SELECT RAISE(ABORT, 'no space left on device'); END`);
    refuse.close();
    const result = await runCli(["--db", lab.db, "worker", writeSuite(), "--concurrency", "4"]);
    expect(result.status, result.stderr).toBe(1);
    expect(result.stderr).toMatch(
      /: 0 runs finished here \(0 with a failed turn, 48 could not run\); experiment slow-[0-9a-f]{8}: 0 of 48 runs done, 48 could not run\n/,
    );
    expect(result.stderr).toMatch(/could not run: a turn of the run could not be recorded/);
  });

  it("names bad arguments clearly", async () => {
    // A lab that exists, without the experiment a case below asks to join.
    new SqliteSessionStore(lab.db).close();
    const cases: [string[], string][] = [
      [["bench", "bundled", "--workers", "0"], "agent-lab: bench: workers: must be 1 to 64"],
      [
        ["bench", "bundled", "--lease", "2"],
        "agent-lab: bench: --lease is the workers' claim lease: it needs --workers N",
      ],
      [
        ["bench", "bundled", "--workers", "2", "--lease", "0.1"],
        "agent-lab: bench: lease: must be 0.5 to 3600 seconds",
      ],
      [
        ["worker"],
        "agent-lab: worker: name a suite file, or --experiment ID to join an experiment already in the database",
      ],
      [
        ["worker", "--experiment", "nope-1", "--repetitions", "2"],
        "agent-lab: worker: --repetitions plans runs, so it needs a suite; --experiment alone runs the stored plan",
      ],
      [
        ["worker", "--experiment", "nope-1"],
        'agent-lab: worker: experiment "nope-1" is not in this database\'s run queue: start it with "agent-lab bench SUITE --workers N" or "agent-lab worker SUITE"',
      ],
    ];
    for (const [args, line] of cases) {
      const result = await runCli(["--db", lab.db, ...args]);
      expect(result.status, args.join(" ")).toBe(1);
      expect(stderrLines(result), args.join(" ")).toEqual([line]);
    }
    // Joining an experiment in a database that is not there: said so, and nothing left behind.
    const nowhere = join(lab.folder, "mistyped.sqlite3");
    const joined = await runCli(["--db", nowhere, "worker", "--experiment", "bundled-1"]);
    expect(joined.status).toBe(1);
    expect(stderrLines(joined)).toEqual([
      `agent-lab: worker: there is no lab at ${nowhere} to join experiment "bundled-1" in: check --db (or $AGENT_LAB_DB), or start the experiment there with "agent-lab bench SUITE --workers N"`,
    ]);
    expect(existsSync(nowhere)).toBe(false);
    const memory = await runCli(["--db", ":memory:", "bench", "bundled", "--workers", "2"]);
    expect(memory.status).toBe(1);
    expect(stderrLines(memory)).toEqual([
      "agent-lab: workers share the lab's database, and an in-memory database is private to one process: name a database file or a postgres:// URL with --db",
    ]);
  });
});
