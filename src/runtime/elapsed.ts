/** Milliseconds with one decimal, as the providers report them. */
export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

export function elapsedSince(start: number, end = performance.now()): number {
  return roundMs(end - start);
}
