import { policyApprover } from "../domain/approvals.js";
import { DatabaseWentAway, untilDatabaseAnswers } from "../domain/database-away.js";
import { StorageError } from "../domain/errors.js";
import type { ChatModel } from "../providers/chat-model.js";
import { runTurn } from "../runtime/run-turn.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
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
 * run (the next turn still runs on a valid history); a cancelled one does, leaving it incomplete.
 * Anything thrown (the lab's own database failed a turn, or went away while the session was
 * made) means the run could not run: its session is removed, then the error is passed on.
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
  try {
    return await runTurns(run, sessionId, options, config, models);
  } catch (error) {
    // The run could not run (its session was being made when the database went away, a turn
    // could not be claimed or recorded, the session vanished): what it left goes, so no cell
    // counts a part of it and the experiment's sessions are its runs. Tried again while the
    // database is away; past the limit (a longer outage) a resume removes it.
    await untilDatabaseAnswers(
      async () => {
        if ((await store.getSession(sessionId)) !== null) await store.deleteSession(sessionId);
      },
      { limit_ms: RUN_CLEANUP_LIMIT_MS, every_ms: 500, signal },
    ).catch(() => {});
    throw error;
  }
}

async function runTurns(
  run: PlannedRun,
  sessionId: string,
  options: RunExecution,
  config: ReturnType<typeof runConfig>,
  models: { chat: ChatModel; event: ChatModel },
): Promise<RunEnd> {
  const { store, signal } = options;
  await store.createSession({
    session_id: sessionId,
    title: `${options.suite.name} · ${run.cell.label} · ${run.scenario.id} #${run.repetition}`,
    config,
  });
  let failed = false;
  for (const turn of run.scenario.turns) {
    if (signal?.aborted) return "cancelled";
    let status: string | null = null;
    let storage: { message: string; code: string | null; away: boolean } | null = null;
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
      if (event.type === "error" && event.code === "storage_failed") {
        storage = {
          message: event.message,
          code: event.storage_code ?? null,
          away: event.database_away === true,
        };
      }
    }
    if (status === null || status === "cancelled") return "cancelled";
    // The lab's own database failed the turn, not the model: the run could not run (a failed
    // turn would make it a complete run that counts against its cell). The turn's end is retried
    // in the background meanwhile, and stored as failed once the database is back; the session
    // is removed with it (executeRun).
    if (status === "failed" && storage !== null) {
      // A database that went away is told apart from a refusal by the event: the worker runs
      // the run again once it is back. The database's code stays the error's (the message ends
      // with it, and the rebuilt error's message puts it there again).
      const ending = storage.code === null ? "" : ` (${storage.code})`;
      const reason =
        ending !== "" && storage.message.endsWith(ending)
          ? storage.message.slice(0, -ending.length)
          : storage.message;
      throw new StorageError(
        reason,
        storage.code,
        storage.away ? { cause: new DatabaseWentAway(storage.message) } : undefined,
        "a turn of the run could not be recorded",
      );
    }
    if (status === "failed") failed = true;
  }
  return failed ? "failed" : "finished";
}
