/**
 * The one way the lab writes a duration, shared by the CLI, the web UI and the experiment
 * reports (plain functions, no Node or DOM, so the web bundle imports them too).
 *
 * Below 1 s in milliseconds, above it in seconds, always three significant digits at most:
 * `0.4 ms`, `3.4 ms`, `85 ms`, `850 ms`, `1.24 s`, `12.3 s`, `2 min 5 s`.
 */
export function formatDuration(ms: number | null | undefined, missing = "–"): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return missing;
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  // Each bound is checked after rounding, so 999.7 ms reads "1.00 s", never "1000 ms".
  if (abs < 9.95) return `${sign}${Number(abs.toFixed(1))} ms`;
  if (Math.round(abs) < 1000) return `${sign}${Math.round(abs)} ms`;
  if (Math.round(abs / 10) < 1000) return `${sign}${(abs / 1000).toFixed(2)} s`;
  if (Math.round(abs / 100) < 600) return `${sign}${(abs / 1000).toFixed(1)} s`;
  const seconds = Math.round(abs / 1000);
  return `${sign}${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * Round gridlines for a 0..max axis: a step of 1, 2, 2.5 or 5 times a power of ten, so that
 * `count` steps or fewer reach past max. The axis ends at the last tick, not at max.
 */
export function roundTicks(max: number, count = 4): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step =
    [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough) ??
    10 * power;
  const ticks: number[] = [];
  // Multiplying (not adding) keeps 0.1 steps free of 0.30000000000000004.
  for (let index = 0; ticks.at(-1) === undefined || (ticks.at(-1) as number) < max; index += 1) {
    ticks.push(Number((index * step).toPrecision(12)));
  }
  return ticks;
}
