import type { SessionStore } from "../store/session-store.js";

/** A turn whose end is stored: what an observer needs to read it back. */
export interface EndedTurn {
  store: SessionStore;
  session_id: string;
  turn_index: number;
}

/**
 * Told of every turn this process runs, once its end is stored (telemetry export, say). The
 * runtime waits for it before `runTurn` returns, so it may read the turn from a store its caller
 * is about to close; what it does must not fail the turn, and what it throws is ignored.
 */
export interface TurnObserver {
  turnEnded(turn: EndedTurn): Promise<void> | void;
}

// Process-wide, so every face (CLI, server, gateway, experiments) is observed without each
// passing an option; the composition root registers one when the environment asks for it.
const observers = new Set<TurnObserver>();

/** Registers an observer; the function returned removes it. */
export function observeTurns(observer: TurnObserver): () => void {
  observers.add(observer);
  return () => {
    observers.delete(observer);
  };
}

/** Tells every observer; undefined (no promise to await) when there is none. */
export function notifyTurnEnded(turn: EndedTurn): Promise<void> | undefined {
  if (observers.size === 0) return undefined;
  return Promise.all(
    [...observers].map(async (observer) => {
      try {
        await observer.turnEnded(turn);
      } catch {
        // An observer's failure is its own to report; the turn is stored and over.
      }
    }),
  ).then(() => {});
}
