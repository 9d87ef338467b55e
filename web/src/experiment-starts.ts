/**
 * Experiments started from this tab, until their page has looked at them: a fast experiment (the
 * simulated model runs a small suite in a second or two) can end before the page connects to its
 * events, which then say only `idle`; the page still owes the user "it ran and finished".
 */
const started = new Map<string, { total: number; skipped: number }>();

export function rememberStart(id: string, plan: { total: number; skipped: number }): void {
  started.set(id, plan);
}

/** The plan of an experiment this tab started and has not asked about yet (then forgotten). */
export function takeStart(id: string): { total: number; skipped: number } | null {
  const plan = started.get(id) ?? null;
  started.delete(id);
  return plan;
}
