/**
 * A maximum matching of expectations to the calls that fit them (augmenting paths; a turn has a
 * handful of calls). `fits[i]` lists the call indexes expectation i accepts; entry i of the result
 * is the call serving expectation i, or null. Each call serves one expectation at most, so one
 * call cannot satisfy two, and the order calls were made in does not matter.
 */
export function assignCalls(
  fits: readonly (readonly number[])[],
  callCount: number,
): (number | null)[] {
  const owner: (number | null)[] = Array.from({ length: callCount }, () => null);
  const tryAssign = (expectation: number, seen: Set<number>): boolean => {
    for (const call of fits[expectation] ?? []) {
      if (seen.has(call)) continue;
      seen.add(call);
      const current = owner[call];
      if (current === null || current === undefined || tryAssign(current, seen)) {
        owner[call] = expectation;
        return true;
      }
    }
    return false;
  };
  for (const expectation of fits.keys()) tryAssign(expectation, new Set());
  const assignment: (number | null)[] = fits.map(() => null);
  owner.forEach((expectation, call) => {
    if (expectation !== null) assignment[expectation] = call;
  });
  return assignment;
}
