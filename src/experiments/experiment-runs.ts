import { ExperimentTag } from "../domain/experiment.js";
import type { SessionRecord, TurnRecord } from "../domain/records.js";
import type { ExperimentRecords } from "../store/experiment-records.js";
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

/**
 * How many sessions a report or a resume reads at once, with all their rows: large enough that
 * the per-query cost vanishes, small enough that memory does not grow with the experiment.
 */
export const EXPERIMENT_SLICE = 500;

/** The experiment's records a slice at a time, oldest sessions first (bulk reads, any size). */
export async function* experimentSlices(
  store: SessionStore,
  experimentId: string,
  limit = EXPERIMENT_SLICE,
): AsyncGenerator<ExperimentRecords> {
  let cursor: string | null = null;
  do {
    const slice: ExperimentRecords = await store.experimentRecords(experimentId, {
      limit,
      ...(cursor !== null ? { cursor } : {}),
    });
    yield slice;
    cursor = slice.next_cursor;
  } while (cursor !== null);
}

/** The slice's sessions tagged with the experiment, with their turns and completeness. */
export function storedRunsOf(slice: ExperimentRecords, experimentId: string): StoredRun[] {
  const runs: StoredRun[] = [];
  for (const session of slice.sessions) {
    const tag = experimentTagOf(session);
    if (tag === null || tag.id !== experimentId) continue;
    const turns = slice.turns.get(session.id) ?? [];
    runs.push({ session, tag, turns, complete: isRunComplete(turns, tag.expect.length) });
  }
  return runs;
}

/** Every session tagged with the experiment, oldest first, with its turns and completeness. */
export async function findExperimentRuns(
  store: SessionStore,
  experimentId: string,
): Promise<StoredRun[]> {
  const runs: StoredRun[] = [];
  for await (const slice of experimentSlices(store, experimentId)) {
    runs.push(...storedRunsOf(slice, experimentId));
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
