import { isDatabaseAway } from "../domain/database-away.js";
import { codeOf, StorageError } from "../domain/errors.js";
import { redactSecretText } from "../domain/secrets.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { emptyUsageRollup, type TurnUsageRollup } from "../domain/usage.js";
import type { SessionStore } from "../store/session-store.js";
import type { TurnRecords } from "./turn-records.js";

/** How often, and how long, a failed turn's end is retried while the database refuses it. */
const RETRY_EVERY_MS = 1_000;
const RETRY_FOR_MS = 10 * 60_000;

export interface TurnFailure {
  code: string;
  message: string;
  storage_code?: string;
  database_away?: true;
}

/**
 * What a turn or a round that threw reports, redacted (any ChatModel's error may quote its
 * endpoint): a lab error as it is; anything else as an internal error. A storage failure that was
 * the database going away says so, for whoever reads only the event (an experiment's run, which
 * runs the turn again once the database is back): the driver's error stays here, and its code
 * (a SQLSTATE, SQLite's SQLITE_FULL…) goes with the event, so no reader parses it from the text.
 */
export function describeFailure(error: unknown): TurnFailure {
  const message = redactSecretText(error instanceof Error ? error.message : String(error));
  const code = codeOf(error);
  const storageCode = error instanceof StorageError ? error.storageCode : null;
  const away = code === "storage_failed" && isDatabaseAway(error);
  return {
    code,
    message,
    ...(storageCode !== null ? { storage_code: storageCode } : {}),
    ...(away ? { database_away: true } : {}),
  };
}

async function storeEnd(
  store: SessionStore,
  sessionId: string,
  turnIndex: number,
  wallTimeMs: number,
  failure: TurnFailure,
): Promise<void> {
  await store.completeTurn(sessionId, {
    turn_index: turnIndex,
    wall_time_ms: wallTimeMs,
    status: "failed",
  });
  try {
    await store.appendAudit(sessionId, {
      event: "turn_failed",
      details: { ...failure },
      turn_index: turnIndex,
    });
  } catch {
    // The turn's end is what unlocks the session; its audit line is a bonus when space is short.
  }
}

/** Only a database refusal (disk full, locked…) may pass; a closed store or a bug will not. */
const mayPass = (error: unknown) => codeOf(error) === "storage_failed";

/** The ends being retried, each settled once stored or given up (see settleTurnEnds). */
const retrying = new Set<Promise<boolean>>();

/** Retries a refused end in the background (a server stays up, and the disk may get space). */
function retryEnd(end: () => Promise<void>): void {
  const deadline = Date.now() + RETRY_FOR_MS;
  let settle: (stored: boolean) => void = () => {};
  const settled = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  retrying.add(settled);
  void settled.then(() => retrying.delete(settled));
  const timer = setInterval(() => {
    end().then(
      () => {
        clearInterval(timer);
        settle(true);
      },
      (error: unknown) => {
        if (Date.now() <= deadline && mayPass(error)) return;
        clearInterval(timer);
        settle(false);
      },
    );
  }, RETRY_EVERY_MS);
  // A server keeps retrying while it runs; a command that ends waits (settleTurnEnds) or leaves.
  timer.unref();
}

/** How many failed turns' ends the database has refused so far and are still retried. */
export function pendingTurnEnds(): number {
  return retrying.size;
}

/**
 * Waits, at most `waitMs`, for the ends still retried to be stored (or given up), keeping the
 * process alive meanwhile: a command that printed "failed" must not exit while the database
 * still has the turn running. True when none is left.
 */
export async function settleTurnEnds(waitMs: number): Promise<boolean> {
  if (retrying.size === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
  });
  await Promise.race([Promise.all([...retrying]), timeout]);
  clearTimeout(timer);
  return retrying.size === 0;
}

/**
 * Ends a turn that threw after it was claimed: stored as `failed` with the error in its audit log
 * (retried while the database refuses, so the session is not left locked), then reported as an
 * `error` and a `turn_end`. Never throws: the caller still releases the session.
 */
export async function endFailedTurn(
  store: SessionStore,
  sessionId: string,
  turnIndex: number,
  wallTimeMs: number,
  error: unknown,
  emit: (event: TurnEvent) => void,
  records?: TurnRecords,
): Promise<void> {
  const failure = describeFailure(error);
  // What the turn still held (its current round) goes first, if the database takes it.
  await records?.flushLeftovers();
  const end = () => storeEnd(store, sessionId, turnIndex, wallTimeMs, failure);
  try {
    await end();
  } catch (refusal) {
    if (mayPass(refusal)) retryEnd(end);
  }
  // Read with the leftovers (this turn's calls only); none when even that write was refused.
  const usage: TurnUsageRollup = records?.rollup(wallTimeMs) ?? {
    turn_index: turnIndex,
    ...emptyUsageRollup(),
  };
  emit({ type: "error", ...failure });
  emit({
    type: "turn_end",
    session_id: sessionId,
    turn_index: turnIndex,
    status: "failed",
    answer: "",
    wall_time_ms: wallTimeMs,
    usage,
  });
}
