/**
 * The sessions ticked for comparison. Kept apart from the list's pages: a pick stays while the
 * list is filtered, searched or paged past it, and the bar still names it (by the title it had
 * when ticked). Pure, tested without a browser.
 */

export interface Pick {
  id: string;
  title: string;
}

/** The compare page sets two sessions side by side. */
export const MAX_PICKS = 2;

/** Picks after a checkbox changed: a third pick replaces the oldest, unticking removes it. */
export function togglePick(current: readonly Pick[], pick: Pick, checked: boolean): Pick[] {
  const others = current.filter((item) => item.id !== pick.id);
  if (!checked) return others;
  return [...others, pick].slice(-MAX_PICKS);
}

export const pickedIds = (picks: readonly Pick[]): ReadonlySet<string> =>
  new Set(picks.map((pick) => pick.id));
