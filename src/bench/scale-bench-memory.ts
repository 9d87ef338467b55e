import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Figure } from "./measure.js";
import { runAgentLab } from "./scale-cli.js";
import { formatMb, printCurve } from "./scale-measure.js";

/**
 * The peak memory of `agent-lab bench` as the number of runs grows: the bundled suite (56 runs a
 * repetition, sim model) with enough repetitions for each size, each into a fresh database, in a
 * child process like a user's, printing the terminal report (`--json` and `--out` ask for every
 * run in the report, which is then as large as the runs). The floor is the same command doing no work (`--version`).
 */

const RUNS_PER_REPETITION = 56;
const TARGET_BYTES = 300 * 1_048_576;

export async function runBenchMemory(runCounts: readonly number[]): Promise<Figure[]> {
  const folder = mkdtempSync(join(tmpdir(), "agent-lab-scale-bench-"));
  try {
    const idle = await runAgentLab(["--version"]);
    const rows: { runs: number; rss: number; seconds: number }[] = [];
    for (const wanted of runCounts) {
      const repetitions = Math.ceil(wanted / RUNS_PER_REPETITION);
      const runs = repetitions * RUNS_PER_REPETITION;
      const database = join(folder, `bench-${runs}.sqlite3`);
      const run = await runAgentLab([
        "--db",
        database,
        "bench",
        "bundled",
        "--repetitions",
        String(repetitions),
        "--experiment",
        `scale-bench-${runs}`,
      ]);
      rows.push({ runs, rss: run.max_rss_bytes, seconds: run.wall_ms / 1000 });
      console.log(
        `  agent-lab bench bundled --repetitions ${repetitions}: ${runs} runs in ${(run.wall_ms / 1000).toFixed(1)} s, peak RSS ${formatMb(run.max_rss_bytes)}`,
      );
      for (const suffix of ["", "-wal", "-shm"]) rmSync(database + suffix, { force: true });
    }
    printCurve(
      "agent-lab bench, runs:",
      rows.map((row) => row.runs),
      [
        ["peak RSS", rows.map((row) => formatMb(row.rss))],
        ["wall time", rows.map((row) => `${row.seconds.toFixed(1)} s`)],
        ["per run", rows.map((row) => `${((row.seconds * 1000) / row.runs).toFixed(2)} ms`)],
      ],
    );
    const first = rows[0] as { runs: number; rss: number };
    const last = rows[rows.length - 1] as { runs: number; rss: number };
    const peak = Math.max(...rows.map((row) => row.rss));
    return [
      {
        name: `agent-lab bench peak RSS, ${first.runs.toLocaleString("en-US")} to ${last.runs.toLocaleString("en-US")} runs`,
        value: `${formatMb(last.rss)} at ${last.runs.toLocaleString("en-US")} runs (${formatMb(first.rss)} at ${first.runs.toLocaleString("en-US")})`,
        baseline: `${formatMb(idle.max_rss_bytes)} (agent-lab --version)`,
        ratio: last.rss / first.rss,
        target: "flat, <= 300 MB at every size",
        met: peak <= TARGET_BYTES,
      },
    ];
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
