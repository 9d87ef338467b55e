import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExperimentReport } from "../domain/experiment.js";
import { findExperimentRuns } from "../experiments/experiment-runs.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { freshLab, runCli, startCli, stderrLines } from "./test-fixtures.js";

const lab = freshLab();

function writeSuite(name: string, text: string): string {
  const path = join(lab.folder, name);
  writeFileSync(path, text);
  return path;
}

/** Resolves once the CLI's progress on stderr matches `pattern` (a run has finished). */
function stderrShows(running: ReturnType<typeof startCli>, pattern: RegExp): Promise<void> {
  let stderr = "";
  return new Promise((resolve) => {
    running.child.stderr?.on("data", (text: string) => {
      stderr += text;
      if (pattern.test(stderr)) resolve();
    });
  });
}

/** 2 modes × 1 scenario × 4 repetitions, on a simulated model slow enough to interrupt. */
const SLOW_SUITE = `
name: slow
config:
  chat_agent: { options: { tokens_per_second: 60 } }
matrix:
  modes: [chat_agent_tools, dual_agent]
repetitions: 4
concurrency: 2
scenarios:
  - id: greeting
    category: irrelevance
    turns:
      - user: hello
        expect: { no_tools: true }
`;

describe("agent-lab bench", () => {
  it("runs the bundled suite, prints the JSON report and writes report.json and report.html", async () => {
    const out = join(lab.folder, "reports");
    const result = await runCli([
      "--db",
      lab.db,
      "bench",
      "bundled",
      "--out",
      out,
      "--repetitions",
      "1",
      "--json",
    ]);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as ExperimentReport;
    expect(report.suite).toBe("bundled");
    expect(report.simulated).toBe(true);
    expect(report.cells).toHaveLength(4);
    expect(report.cells.map((cell) => cell.label)).toEqual([
      "clean · chat_agent_tools · sim",
      "clean · dual_agent · sim",
      "sloppy-arguments · chat_agent_tools · sim",
      "sloppy-arguments · dual_agent · sim",
    ]);
    const scenarios = report.runs.length / 4;
    expect(report.cells.every((cell) => cell.runs === scenarios)).toBe(true);

    expect(JSON.parse(readFileSync(join(out, "report.json"), "utf8"))).toEqual(report);
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html.toLowerCase()).not.toContain("<script");
    expect(html).not.toContain("http");
    expect(html).toContain("chat_agent_tools · sim");

    const lines = stderrLines(result);
    expect(lines[0]).toBe(`experiment ${report.experiment_id}: ${report.runs.length} runs`);
    expect(lines.at(-1)).toBe(
      `reports written: ${join(out, "report.json")} and ${join(out, "report.html")}`,
    );
  });

  it("refuses an invalid suite with one line naming the file, line and field", async () => {
    const suite = writeSuite(
      "bad.yaml",
      "name: bad\nscenarios:\n  - id: one\n    category: simpel\n    turns:\n      - user: hi\n",
    );
    const result = await runCli(["--db", lab.db, "bench", suite]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    const lines = stderrLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^agent-lab: ${suite.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:4:15: scenarios\\.0\\.category: `,
      ),
    );
    // Nothing was stored: the suite is checked before the database is opened.
    expect(existsSync(lab.db)).toBe(false);

    const missing = await runCli(["--db", lab.db, "bench", join(lab.folder, "nowhere.yaml")]);
    expect(missing.status).toBe(1);
    expect(stderrLines(missing)).toEqual([
      `agent-lab: suite file not found: ${join(lab.folder, "nowhere.yaml")}`,
    ]);
  });

  it("refuses bad flags", async () => {
    const result = await runCli(["--db", lab.db, "bench", "bundled", "--concurrency", "0"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual(["agent-lab: bench: concurrency: must be 1 to 64"]);
  });

  it("stops cleanly on Ctrl-C (exit 130) and the same command resumes and finishes", async () => {
    const suite = writeSuite("slow.yaml", SLOW_SUITE);
    const running = startCli(["--db", lab.db, "bench", suite]);
    await stderrShows(running, /\] [1-9]\d*\/8 runs/);
    running.child.kill("SIGINT");
    const stopped = await running.result;
    expect(stopped.status).toBe(130);
    const stopLine = stderrLines(stopped).at(-1) ?? "";
    expect(stopLine).toMatch(
      /^stopped: [1-7] of 8 runs finished; run the same command again to resume$/,
    );
    // The partial report is printed all the same.
    expect(stopped.stdout).toContain("success [95% CI]");

    const resumed = await runCli(["--db", lab.db, "bench", suite]);
    expect(resumed.status).toBe(0);
    const finishedBefore = Number(/stopped: (\d+)/.exec(stopLine)?.[1]);
    expect(stderrLines(resumed)[0]).toMatch(
      new RegExp(
        `^experiment slow-[0-9a-f]{8}: 8 runs \\(${finishedBefore} already finished: resuming\\)$`,
      ),
    );
    expect(resumed.stdout).toContain("simulated model: these numbers show the machinery");
    expect(resumed.stdout).toMatch(/^chat_agent_tools · sim +4 /m);
    expect(resumed.stdout).toMatch(/^dual_agent · sim +4 /m);

    const store = new SqliteSessionStore(lab.db);
    try {
      const experimentId = /experiment (slow-[0-9a-f]{8})/.exec(resumed.stderr)?.[1] ?? "";
      const runs = await findExperimentRuns(store, experimentId);
      expect(runs).toHaveLength(8);
      expect(runs.every((run) => run.complete)).toBe(true);
      expect(new Set(runs.map((run) => run.tag.run_key)).size).toBe(8);
    } finally {
      store.close();
    }
  });

  it("hears Ctrl-C while the simulated model answers at once (no run waits for I/O)", async () => {
    const running = startCli([
      "--db",
      join(lab.folder, "instant.sqlite3"),
      "bench",
      "bundled",
      "--repetitions",
      "50",
    ]);
    await stderrShows(running, /\] [1-9]\d*\/2800 runs/);
    running.child.kill("SIGINT");
    const stopped = await running.result;
    expect(stopped.status).toBe(130);
    expect(stderrLines(stopped).at(-1)).toMatch(/^stopped: \d+ of 2800 runs finished; /);
  });

  it("explains itself in --help, with examples", async () => {
    const result = await runCli(["bench", "--help"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Usage: agent-lab bench [options] [suite]");
    expect(result.stdout).toContain("--repetitions <n>");
    expect(result.stdout).toContain("$ agent-lab bench bundled --repetitions 5 --out reports/");
  });
});
