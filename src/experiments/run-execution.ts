import { policyApprover } from "../domain/approvals.js";
import { StorageError } from "../domain/errors.js";
import { runTurn } from "../runtime/run-turn.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import { untilDatabaseAnswers } from "../store/database-away.js";
import type { SessionStore } from "../store/session-store.js";
import { type PlanContext, type PlannedRun, runConfig } from "./run-plan.js";

export type RunEnd = "finished" | "failed" | "cancelled";

/**
 * How long a run whose turn the database failed waits for it to answer, to remove its session:
 * past it (a longer outage), the turn may still be stored failed later and count as a result.
 */
const RUN_CLEANUP_LIMIT_MS = 60_000;

export interface RunExecution extends PlanContext {
  store: SessionStore;
  providers: TurnProviders;
  signal?: AbortSignal | undefined;
}

/**
 * One run: a fresh session `sessionId` (after removing the run key's unfinished ones, so results
 * never mix), its scenario's turns in order on one pair of models. A failed turn does not stop the
 * run (the next turn still runs on a valid history); a cancelled one does, leaving it incomplete,
 * and so does one the lab's own database failed (thrown, its session removed: the run could not
 * run).
 */
export async function executeRun(
  run: PlannedRun,
  sessionId: string,
  stale: readonly string[],
  options: RunExecution,
): Promise<RunEnd> {
  const { store, signal } = options;
  if (signal?.aborted) return "cancelled";
  for (const oldId of stale) {
    if ((await store.getSession(oldId)) !== null) await store.deleteSession(oldId);
  }
  const config = runConfig(run, options);
  const models = {
    chat: options.providers.models.chatModel(config.chat_agent),
    event: options.providers.models.chatModel(config.event_agent),
  };
  await store.createSession({
    session_id: sessionId,
    title: `${options.suite.name} · ${run.cell.label} · ${run.scenario.id} #${run.repetition}`,
    config,
  });
  let failed = false;
  for (const turn of run.scenario.turns) {
    if (signal?.aborted) return "cancelled";
    let status: string | null = null;
    let storage: string | null = null;
    for await (const event of runTurn({
      store,
      message: turn.user,
      session_id: sessionId,
      models,
      approve: policyApprover(options.suite.approval),
      providers: options.providers,
      ...(signal !== undefined ? { signal } : {}),
    })) {
      if (event.type === "turn_end") status = event.status;
      if (event.type === "error" && event.code === "storage_failed") storage = event.message;
    }
    if (status === null || status === "cancelled") return "cancelled";
    // The lab's own database failed the turn, not the model: the run could not run. Its session
    // goes (a failed turn would make it a complete run that counts against its cell), so a
    // resume runs it again. Tried again while the database is away: the turn's end is retried
    // in the background meanwhile, and stored as failed once the database is back.
    if (status === "failed" && storage !== null) {
      await untilDatabaseAnswers(async () => store.deleteSession(sessionId), {
        limit_ms: RUN_CLEANUP_LIMIT_MS,
        every_ms: 500,
        signal,
      }).catch(() => {});
      throw new StorageError(storage, null, undefined, "a turn of the run could not be recorded");
    }
    if (status === "failed") failed = true;
  }
  return failed ? "failed" : "finished";
}
