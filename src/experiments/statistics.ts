/**
 * The small statistics an experiment report needs: a confidence interval for a success rate that
 * behaves at 0 %, 100 % and with few runs (Wilson), and percentiles of latencies.
 */

/** z for a two-sided 95 % interval. */
export const Z_95 = 1.959963984540054;

/**
 * The Wilson score interval of a binomial proportion (`successes` of `trials`), default 95 %.
 * Unlike the normal approximation it stays inside [0, 1] and is not degenerate at 0 or all
 * successes. No trials: [0, 1], nothing is known.
 */
export function wilsonInterval(successes: number, trials: number, z = Z_95): [number, number] {
  if (!Number.isInteger(trials) || trials < 0) {
    throw new RangeError(`wilsonInterval: trials must be a whole number >= 0, got ${trials}`);
  }
  if (!Number.isInteger(successes) || successes < 0 || successes > trials) {
    throw new RangeError(
      `wilsonInterval: successes must be a whole number from 0 to ${trials}, got ${successes}`,
    );
  }
  if (!(z > 0) || !Number.isFinite(z)) {
    throw new RangeError(`wilsonInterval: z must be a positive number, got ${z}`);
  }
  if (trials === 0) return [0, 1];
  const proportion = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const center = (proportion + z2 / (2 * trials)) / denominator;
  const margin =
    (z * Math.sqrt((proportion * (1 - proportion)) / trials + z2 / (4 * trials * trials))) /
    denominator;
  // The exact bounds at 0 and all successes; elsewhere clamp rounding noise.
  const low = successes === 0 ? 0 : Math.max(0, center - margin);
  const high = successes === trials ? 1 : Math.min(1, center + margin);
  return [low, high];
}

/**
 * The `p`-th percentile, **p from 0 to 100** (like numpy's `percentile`, not a fraction), by
 * linear interpolation between the closest ranks (numpy's default method). Non-finite values are
 * ignored; null when no value is left.
 */
export function percentile(values: number[], p: number): number | null {
  if (!(p >= 0 && p <= 100)) {
    throw new RangeError(`percentile: p must be from 0 to 100, got ${p}`);
  }
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const rank = (p / 100) * (sorted.length - 1);
  const lowerIndex = Math.floor(rank);
  const lower = sorted[lowerIndex] as number;
  const upper = sorted[Math.min(lowerIndex + 1, sorted.length - 1)] as number;
  return lower + (upper - lower) * (rank - lowerIndex);
}
