/**
 * A clock that moves only when told, for the bench helpers' tests: a timer given it (TimedModel,
 * sampleMedian) counts exactly, however busy the machine running the tests is.
 */
export function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let time = 0;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
