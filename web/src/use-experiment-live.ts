import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage, isAbortError, streamExperimentEvents } from "./api.js";
import {
  applyExperimentEvent,
  CONNECTING,
  endedBeforeWatching,
  type LiveState,
} from "./experiment-progress.js";
import { forgetStart, startedPlan } from "./experiment-starts.js";

export interface ExperimentLive extends LiveState {
  /** Follows the events again (after a dropped connection or an error). */
  reconnect: () => void;
}

/**
 * Follows `GET /api/experiments/:id/events` while the page is open. The server answers `idle` and
 * closes when nothing runs under the id, so an ended experiment costs one short request; a running
 * one streams until `done`, `cancelled` or `error`. `generation` forces a new connection (a start
 * from this page).
 */
export function useExperimentLive(id: string, generation = 0): ExperimentLive {
  const [state, setState] = useState<LiveState>(CONNECTING);
  const [attempt, setAttempt] = useState(0);
  const stateRef = useRef(state);
  stateRef.current = state;

  // biome-ignore lint/correctness/useExhaustiveDependencies: attempt and generation reconnect on purpose.
  useEffect(() => {
    const controller = new AbortController();
    setState(CONNECTING);
    let current: LiveState = CONNECTING;
    const plan = startedPlan(id);
    streamExperimentEvents(
      id,
      (event) => {
        forgetStart(id);
        current =
          event.type === "idle" && plan !== null
            ? endedBeforeWatching(event.progress, plan)
            : applyExperimentEvent(current, event);
        setState(current);
      },
      controller.signal,
    )
      .then(() => {
        // The stream closed while the experiment ran (the server went away): say so.
        if (current.phase === "running" || current.phase === "connecting") {
          setState({ ...current, phase: "error", detail: "the progress stream closed" });
        }
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted || isAbortError(error)) return;
        setState({ ...current, phase: "error", detail: errorMessage(error) });
      });
    return () => controller.abort();
  }, [id, attempt, generation]);

  const reconnect = useCallback(() => setAttempt((value) => value + 1), []);
  return { ...state, reconnect };
}
