import { hostname } from "node:os";
import { isMainThread, threadId } from "node:worker_threads";
import { TurnInProgressError } from "../domain/errors.js";
import { type ExpectedSession, runtimeClaim, type SessionStore } from "../store/session-store.js";

/**
 * This runtime, as recorded in `turns.runner`: "pid@host", plus "#thread-N" in a worker thread,
 * since threads share a pid but not this module (nor its record of the turns it runs).
 */
export const THIS_RUNNER = isMainThread
  ? `${process.pid}@${hostname()}`
  : `${process.pid}@${hostname()}#thread-${threadId}`;

const running = new Set<string>();

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the runner of a turn still marked running may still be running it. Called while this
 * runtime holds the session (see claimTurn), so a turn of its own is one whose end could not be
 * stored (the database refused it): not running any more.
 */
function isAlive(runner: string | null): boolean {
  if (runner === null || runner === THIS_RUNNER) return false;
  const match = /^(\d+)@([^#]+)/.exec(runner);
  // A runner on another host cannot be checked; a turn's record alone must not lock a session.
  if (match === null || match[2] !== hostname()) return false;
  return processAlive(Number(match[1]));
}

export interface ClaimedSessionTurn {
  turn_index: number;
  /** Turns of dead runners the claim marked interrupted. */
  interrupted: number[];
  /** Gives the session back to this process; the stored turn must be ended first. */
  release(): void;
}

/**
 * One turn at a time per session: refused at once in this process, and across processes (and
 * threads) while the one that runs the turn is alive, by the store's atomic claim. A turn left
 * "running" by a process that died (kill -9) is marked interrupted, so the session can go on.
 * The claim stores the turn, its user message and its first audit row (`audit`, the turn_start).
 */
export async function claimTurn(
  store: SessionStore,
  sessionId: string,
  userMessage: string,
  audit?: { event: string; details: Record<string, unknown> },
  /** The session as this process's last turn left it (ClaimTurnOptions.expected). */
  expected?: ExpectedSession,
): Promise<ClaimedSessionTurn> {
  // Claimed before the first await, so two turns started together in this process cannot both pass.
  if (running.has(sessionId)) throw new TurnInProgressError(sessionId, null, THIS_RUNNER);
  running.add(sessionId);
  const release = () => {
    running.delete(sessionId);
  };
  try {
    const { turn_index, interrupted } = await store.claimTurn(
      sessionId,
      runtimeClaim({
        user_message: userMessage,
        runner: THIS_RUNNER,
        is_runner_alive: isAlive,
        ...(audit === undefined ? {} : { audit }),
        ...(expected === undefined ? {} : { expected }),
      }),
    );
    return { turn_index, interrupted, release };
  } catch (error) {
    release();
    throw error;
  }
}
