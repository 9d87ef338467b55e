import { ExperimentTag } from "../domain/experiment.js";
import type { SessionRecord, TurnRecord } from "../domain/records.js";
import type { SessionStore } from "../store/session-store.js";

/**
 * An experiment's runs as the store holds them: every run is a session whose config carries an
 * `experiment` tag, found by the experiment's id.
 */

/** How a turn may end for its run to count as finished (a failed turn is a result, too). */
export const FINISHED_TURN_STATUSES: ReadonlySet<string> = new Set([
  "completed",
  "failed",
  "max_rounds",
]);

export interface StoredRun {
  session: SessionRecord;
  tag: ExperimentTag;
  turns: TurnRecord[];
  /** Every turn of the scenario is stored and ended in a finished status. */
  complete: boolean;
}

/**
 * A run is complete when it stored every turn its scenario has (`expectedTurns`) and each ended
 * completed, failed or at max_rounds. A cancelled, interrupted or still running turn, or a missing
 * one, leaves it incomplete: resuming runs it again in a new session.
 */
export function isRunComplete(
  turns: readonly { status: string }[],
  expectedTurns: number,
): boolean {
  return (
    turns.length >= expectedTurns &&
    turns.length > 0 &&
    turns.every((turn) => FINISHED_TURN_STATUSES.has(turn.status))
  );
}

/** The experiment tag of a stored session, or null when it has none or a malformed one. */
export function experimentTagOf(session: SessionRecord): ExperimentTag | null {
  const parsed = ExperimentTag.safeParse(session.config.experiment);
  return parsed.success ? parsed.data : null;
}

/** Every session tagged with the experiment, oldest first, with its turns and completeness. */
export async function findExperimentRuns(
  store: SessionStore,
  experimentId: string,
): Promise<StoredRun[]> {
  const runs: StoredRun[] = [];
  for (const session of await store.findSessionsByExperiment(experimentId)) {
    const tag = experimentTagOf(session);
    if (tag === null || tag.id !== experimentId) continue;
    const turns = await store.listTurns(session.id);
    runs.push({ session, tag, turns, complete: isRunComplete(turns, tag.expect.length) });
  }
  return runs;
}

/**
 * The run that stands for each run key: its oldest complete session. Complete duplicates (two
 * runners racing on one experiment) are ignored, so a run key is never counted twice.
 */
export function completeRunsByKey(runs: readonly StoredRun[]): Map<string, StoredRun> {
  const byKey = new Map<string, StoredRun>();
  for (const run of runs) {
    if (run.complete && !byKey.has(run.tag.run_key)) byKey.set(run.tag.run_key, run);
  }
  return byKey;
}
