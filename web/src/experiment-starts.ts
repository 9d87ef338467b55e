/**
 * Experiments started from this tab, until their page has looked at them: a fast experiment (the
 * simulated model runs a small suite in a second or two) can end before the page connects to its
 * events. The server keeps its latest ended experiments for such late watchers; this covers one
 * it no longer keeps (or a server that keeps none), which then says only `idle`, while the page
 * still owes the user "it ran and finished".
 */
const started = new Map<string, { total: number; skipped: number }>();

export function rememberStart(id: string, plan: { total: number; skipped: number }): void {
  started.set(id, plan);
}

/** The plan of an experiment this tab started and whose events it has not read yet. */
export const startedPlan = (id: string): { total: number; skipped: number } | null =>
  started.get(id) ?? null;

/**
 * Its events have been read: forgotten, so a later visit reads it as any other. (Not on reading
 * the plan: a connection that is dropped before any event, as StrictMode's rehearsal does, leaves
 * it for the next.)
 */
export function forgetStart(id: string): void {
  started.delete(id);
}
