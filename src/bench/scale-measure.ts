import { readFileSync, writeFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { median } from "./measure.js";

/**
 * Timing and memory for the scale benchmark: medians within a time budget (the unpaginated code
 * this benchmark was written against takes seconds a request at 100k sessions), and the peak
 * resident memory a piece of work adds to this process, read from Linux's high-water mark after
 * resetting it (`/proc/self/clear_refs`).
 */

setFlagsFromString("--expose_gc");
const collect = runInNewContext("gc") as () => void;

function statusKb(field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) : Number.NaN;
}

/** Runs `work` and returns the most resident memory it added above the level before it. */
export async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; bytes: number }> {
  // V8 hands freed pages back to the system on background threads after a collection; wait for
  // it, or memory returned during `work` would hide memory `work` took.
  collect();
  await new Promise((resolve) => setTimeout(resolve, 250));
  collect();
  // "5" resets VmHWM to the current RSS (Linux ≥ 4.0).
  writeFileSync("/proc/self/clear_refs", "5");
  const before = statusKb("VmRSS");
  const result = await work();
  return { result, bytes: Math.max(0, statusKb("VmHWM") - before) * 1024 };
}

export interface Sampled {
  median_ms: number;
  samples: number;
}

/**
 * The median of up to `samples` timed runs after warming up, stopping early (at least three
 * runs) once `budgetMs` is spent, so a slow path is measured without taking minutes. A path whose
 * warm-up alone spent the budget is still timed once after it: the warm-up is its first run, and
 * that run pays for cold caches (the OS's pages of a file the session has not read yet, the JIT),
 * once read 17 s where the same raw read took 2.5 s warm, which made the lab's report look 5x
 * cheaper than its floor.
 */
export async function sampleMedian(
  run: () => unknown,
  samples: number,
  budgetMs = 5_000,
  /** The clock (a test's own, to count exactly). */
  now: () => number = () => performance.now(),
): Promise<Sampled> {
  if (!(samples >= 1)) throw new RangeError(`samples must be at least 1, got ${samples}`);
  // Cheap paths get a few warm-up runs (the JIT, SQLite's page cache), expensive ones one.
  let warmMs = 0;
  for (let warmUp = 0; warmUp < 5 && warmMs < 40; warmUp++) {
    const warm = now();
    await run();
    warmMs = now() - warm;
  }
  const times: number[] = [];
  const started = now();
  for (let sample = 0; sample < samples; sample++) {
    const start = now();
    await run();
    times.push(now() - start);
    if (warmMs > budgetMs) break;
    if (times.length >= 3 && now() - started > budgetMs) break;
  }
  return { median_ms: median(times), samples: times.length };
}

export const formatMs = (ms: number) =>
  Number.isNaN(ms) ? "n/a" : ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(2)} ms`;
export const formatMb = (bytes: number) =>
  Number.isNaN(bytes) ? "n/a" : `${(bytes / 1_048_576).toFixed(1)} MB`;
export const formatCount = (count: number) =>
  count >= 1_000_000 && count % 1_000_000 === 0
    ? `${count / 1_000_000}M`
    : count >= 1000 && count % 1000 === 0
      ? `${count / 1000}k`
      : String(count);

/** Prints a curve: one row per measured line, one column per size. */
export function printCurve(
  title: string,
  sizes: readonly number[],
  rows: ReadonlyArray<readonly [label: string, cells: readonly string[]]>,
): void {
  const width = Math.max(...rows.map(([label]) => label.length), title.length) + 2;
  console.log(
    `\n  ${title.padEnd(width)}${sizes.map((size) => formatCount(size).padStart(12)).join("")}`,
  );
  for (const [label, cells] of rows) {
    console.log(`  ${label.padEnd(width)}${cells.map((cell) => cell.padStart(12)).join("")}`);
  }
}
