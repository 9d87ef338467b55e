import { expect } from "vitest";
import type { StoredRun } from "../../experiments/experiment-runs.js";
import type { RunningCli } from "../test-fixtures.js";

/** Test helpers of `bench --workers` and `worker`, shared by the SQLite and PostgreSQL tests. */

/** 2 modes × 2 scenarios × 12 repetitions = 48 runs, on a sim slow enough to be caught mid-run. */
export const SLOW_SUITE = `
name: slow
config:
  chat_agent: { options: { tokens_per_second: 60 } }
matrix:
  modes: [chat_agent_tools, dual_agent]
repetitions: 12
concurrency: 2
scenarios:
  - id: greeting
    category: irrelevance
    turns:
      - user: hello
        expect: { no_tools: true }
  - id: weather
    category: simple
    turns:
      - user: what is the weather in Paris?
`;

/** The CLI's stderr as it arrives; `until` resolves with it once it matches. */
export function stderrShows(running: RunningCli): { until(pattern: RegExp): Promise<string> } {
  let stderr = "";
  const waiting: { pattern: RegExp; resolve(text: string): void }[] = [];
  running.child.stderr?.on("data", (text: string) => {
    stderr += text;
    for (const entry of [...waiting]) {
      if (!entry.pattern.test(stderr)) continue;
      waiting.splice(waiting.indexOf(entry), 1);
      entry.resolve(stderr);
    }
  });
  return {
    until(pattern) {
      if (pattern.test(stderr)) return Promise.resolve(stderr);
      return new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve });
        void running.result.then((result) => {
          if (waiting.some((entry) => entry.pattern === pattern))
            reject(new Error(`ended (${result.status}) before ${pattern}: ${result.stderr}`));
        });
      });
    },
  };
}

/** The pid `bench --workers` printed for its worker `index`. */
export function workerPid(stderr: string, index: number): number {
  const pid = Number(new RegExp(`worker ${index} started \\(pid (\\d+)\\)`).exec(stderr)?.[1]);
  expect(pid).toBeGreaterThan(0);
  return pid;
}

/** Every planned run is in the store exactly once, as one complete session. */
export function checkExactlyOnce(runs: readonly StoredRun[], total: number): void {
  const sessionsPerKey = new Map<string, number>();
  for (const run of runs) {
    sessionsPerKey.set(run.tag.run_key, (sessionsPerKey.get(run.tag.run_key) ?? 0) + 1);
  }
  expect(sessionsPerKey.size).toBe(total);
  expect([...sessionsPerKey.values()].every((count) => count === 1)).toBe(true);
  expect(runs.filter((run) => !run.complete).map((run) => run.tag.run_key)).toEqual([]);
  expect(runs).toHaveLength(total);
}

/**
 * Waits until the worker with this pid holds a claim (`claimedBy` counts the queue's claimed rows
 * whose worker id, `host/pid/…`, names it), so a kill test kills a worker that holds runs rather
 * than one between claims, which would leave nothing to claim again.
 */
export async function untilHoldingClaims(
  pid: number,
  claimedBy: (pattern: string) => Promise<number> | number,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await claimedBy(`%/${pid}/%`)) === 0) {
    if (Date.now() > deadline) throw new Error(`worker pid ${pid} never held a claim within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
