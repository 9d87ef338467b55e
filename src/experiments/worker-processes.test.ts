import { describe, expect, it } from "vitest";
import { startWorkerProcesses } from "./worker-processes.js";

/**
 * The local worker processes of `bench --workers`, with stand-in programs for workers (the end of
 * their stdin when the coordinator dies: bench-workers.test.ts, with real ones).
 */

const program = (source: string) => ["--input-type=module", "-e", source];

describe("startWorkerProcesses", () => {
  it("hands on each worker's stderr lines by its number, without the CLI's own prefix", async () => {
    const lines: [number, string][] = [];
    const pool = startWorkerProcesses({
      count: 2,
      args: program(
        'process.stderr.write("agent-lab: run a could not run\\nplain line\\nagent-lab: last");',
      ),
      env: process.env,
      onLine: (index, line) => lines.push([index, line]),
    });
    const ends = await Promise.all(pool.workers.map((worker) => worker.exited));
    expect(ends).toStrictEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    for (const index of [1, 2]) {
      expect(lines.filter(([from]) => from === index).map(([, line]) => line)).toStrictEqual([
        "run a could not run",
        "plain line",
        "last",
      ]);
    }
  });
});
