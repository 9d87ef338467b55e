/** Small timing helpers shared by the benchmarks: medians over repeated runs on a noisy machine. */

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The mean: every sample counts, the occasional costly one included. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * Which CPU-time samples stand for a client's own cost: the lower decile. On this shared virtual
 * machine the same calls' CPU time spread 2.4x between the 10th and the 90th percentile on a quiet
 * box (time taken by the host is counted as ours), and a difference of two medians swung from 0.8x
 * to 1.5x between runs; interference only ever adds time, so the least disturbed samples are the
 * steadiest measure, and the same rule applies to every client compared.
 */
export function leastDisturbed(samples: readonly number[]): number {
  return quantile(samples, 0.1);
}

/** The value below which a fraction `q` of the values lie (nearest rank), NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Milliseconds per call of `run`, as the median of `samples` timed calls after one warm-up. */
export function timeMedian(run: () => unknown, samples: number): number {
  run();
  const times: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return median(times);
}

export interface Figure {
  name: string;
  value: string;
  baseline: string;
  ratio: number;
  target: string;
  met: boolean;
}

export function printFigures(title: string, figures: readonly Figure[]): void {
  console.log(`\n${title}`);
  for (const figure of figures) {
    console.log(
      `  ${figure.met ? "ok  " : "MISS"} ${figure.name}\n` +
        `       ${figure.value}  vs baseline ${figure.baseline}  ratio ${figure.ratio.toFixed(2)}x  (target ${figure.target})`,
    );
  }
}

/**
 * A benchmark knob: the whole number in environment variable `name`, at least `least`, else
 * `fallback` when unset; anything else is an error naming the variable (a typo must not run the
 * default sizes for minutes).
 */
export function countFromEnv(name: string, fallback: number, least = 1): number {
  const text = process.env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < least) {
    throw new Error(`${name}=${text}: expected a whole number of at least ${least}`);
  }
  return value;
}
