import { hostname } from "node:os";
import { TurnInProgressError } from "../domain/errors.js";
import type { SessionStore } from "../store/session-store.js";

/** This process, as recorded in `turns.runner`. */
export const THIS_RUNNER = `${process.pid}@${hostname()}`;

const running = new Set<string>();

function isAlive(runner: string | null): boolean {
  if (runner === null) return false;
  const [pid, host] = runner.split("@");
  // A runner on another host cannot be checked; a turn's record alone must not lock a session.
  if (host !== hostname() || pid === undefined) return false;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * One turn at a time per session: refused at once in this process, and across processes while the
 * process that runs the turn is alive. A turn left "running" by a process that died (kill -9) is
 * marked interrupted, so the session can go on.
 */
export async function acquireTurn(store: SessionStore, sessionId: string): Promise<() => void> {
  // Claimed before the first await, so two turns started together in this process cannot both pass.
  if (running.has(sessionId)) throw new TurnInProgressError(sessionId, null, THIS_RUNNER);
  running.add(sessionId);
  const release = () => {
    running.delete(sessionId);
  };
  try {
    for (const turn of await store.listTurns(sessionId)) {
      if (turn.status !== "running") continue;
      if (turn.runner !== THIS_RUNNER && isAlive(turn.runner)) {
        throw new TurnInProgressError(sessionId, turn.turn_index, turn.runner);
      }
      await store.completeTurn(sessionId, {
        turn_index: turn.turn_index,
        wall_time_ms: null,
        status: "interrupted",
      });
      await store.appendAudit(sessionId, {
        event: "turn_interrupted",
        details: { runner: turn.runner, reason: "its process ended before the turn did" },
        turn_index: turn.turn_index,
      });
    }
    return release;
  } catch (error) {
    release();
    throw error;
  }
}
