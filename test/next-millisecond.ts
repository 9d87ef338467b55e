/**
 * Returns once `Date.now()` has moved past the millisecond it was called in, so that a write made
 * after it is stamped later than any made before it. Stored times are `toISOString()` text, with
 * milliseconds: two writes in the same millisecond tie, and a list ordered by time then id (the
 * sessions list, newest first) then orders them by their ids, which are random.
 */
export function nextMillisecond(): void {
  const start = Date.now();
  while (Date.now() <= start) {
    // at most a millisecond
  }
}
