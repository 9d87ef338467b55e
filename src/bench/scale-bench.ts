import type { Figure } from "./measure.js";
import { printFigures } from "./measure.js";
import { runBenchMemory } from "./scale-bench-memory.js";
import { experimentFixture } from "./scale-experiment-fixture.js";
import { runExperimentCurves } from "./scale-experiments.js";
import {
  callsFixture,
  DEFAULT_CACHE_DIR,
  type Fixture,
  sessionsFixture,
} from "./scale-fixtures.js";
import { runSessionCurves } from "./scale-sessions.js";
import { runUiCurves } from "./scale-ui.js";
import { runUsageCurves } from "./scale-usage.js";

/**
 * `npm run bench -- scale`: the lab at 1k/10k/100k sessions, one session of 1M calls, an
 * experiment of 50k runs, and `agent-lab bench` at growing run counts; every curve beside its
 * raw-SQL (or plain-page) floor measured in the same run.
 *
 * AGENT_LAB_SCALE picks the sizes: `tiny` (the smoke test's), `small` (a quick look), `default`,
 * `full` (adds the 50k-run
 * `agent-lab bench`, several minutes more). AGENT_LAB_SCALE_CACHE moves the generated files
 * (default: the system temp folder); AGENT_LAB_SCALE_PARTS=sessions,experiments,usage,ui,bench
 * picks parts (default all).
 */

interface ScaleSizes {
  sessions: number[];
  calls: number[];
  experiment_runs: number[];
  bench_runs: number[];
}

const SIZES: Record<string, ScaleSizes> = {
  // The smoke test's: that every part still gets to its figures, in seconds.
  tiny: {
    sessions: [200, 1_000],
    calls: [1_000, 5_000],
    experiment_runs: [100, 500],
    bench_runs: [100],
  },
  small: {
    sessions: [1_000, 10_000],
    calls: [10_000, 100_000],
    experiment_runs: [1_000, 5_000],
    bench_runs: [1_000],
  },
  default: {
    sessions: [1_000, 10_000, 100_000],
    calls: [10_000, 100_000, 1_000_000],
    experiment_runs: [1_000, 10_000, 50_000],
    bench_runs: [1_000, 10_000],
  },
  full: {
    sessions: [1_000, 10_000, 100_000],
    calls: [10_000, 100_000, 1_000_000],
    experiment_runs: [1_000, 10_000, 50_000],
    bench_runs: [1_000, 10_000, 50_000],
  },
};

const PARTS = ["sessions", "experiments", "usage", "ui", "bench"] as const;

function describe(name: string, fixture: Fixture): void {
  const how =
    fixture.built_ms === null
      ? "from the cache"
      : `generated in ${(fixture.built_ms / 1000).toFixed(1)} s`;
  console.log(`  ${name}: ${how}`);
}

export async function runScaleBench(): Promise<Figure[]> {
  const scale = process.env.AGENT_LAB_SCALE?.trim() || "default";
  const sizes = SIZES[scale];
  if (sizes === undefined) {
    throw new Error(`AGENT_LAB_SCALE=${scale}: choose ${Object.keys(SIZES).join(", ")}`);
  }
  const parts = (process.env.AGENT_LAB_SCALE_PARTS ?? PARTS.join(","))
    .split(",")
    .map((part) => part.trim());
  const unknown = parts.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length > 0) {
    throw new Error(
      `AGENT_LAB_SCALE_PARTS: unknown ${unknown.join(", ")}; choose ${PARTS.join(", ")}`,
    );
  }
  const cache = process.env.AGENT_LAB_SCALE_CACHE?.trim() || DEFAULT_CACHE_DIR;
  console.log(`\nscale benchmark (${scale}; generated files cached in ${cache})`);

  const sessions: { count: number; path: string }[] = [];
  if (parts.includes("sessions") || parts.includes("ui")) {
    for (const count of sizes.sessions) {
      const fixture = await sessionsFixture(count, cache);
      describe(`${count.toLocaleString("en-US")} sessions`, fixture);
      sessions.push({ count, path: fixture.path });
    }
  }
  const figures: Figure[] = [];
  if (parts.includes("sessions")) figures.push(...(await runSessionCurves(sessions)));
  if (parts.includes("experiments")) {
    const runs = sizes.experiment_runs;
    const experiments = await experimentFixture(runs, cache);
    describe(
      `experiments of ${runs.map((n) => n.toLocaleString("en-US")).join(", ")} runs`,
      experiments,
    );
    figures.push(...(await runExperimentCurves(experiments.path, runs)));
  }
  if (parts.includes("usage")) {
    const calls = await callsFixture(sizes.calls, cache);
    describe(
      `sessions of ${sizes.calls.map((n) => n.toLocaleString("en-US")).join(", ")} calls`,
      calls,
    );
    figures.push(...(await runUsageCurves(calls.path, sizes.calls)));
  }
  if (parts.includes("ui")) figures.push(...(await runUiCurves(sessions)));
  if (parts.includes("bench")) figures.push(...(await runBenchMemory(sizes.bench_runs)));
  printFigures("Scale", figures);
  return figures;
}
