import { type FormEvent, useEffect, useRef, useState } from "react";
import { isAbortError } from "../api.js";
import { configOverrides, NO_CHANGES } from "../config-overrides.js";
import { type ReplayEvent, streamReplay } from "../derived-api.js";
import { compareHref, Link, navigate, sessionHref } from "../router.js";
import { ConfigChangeFields } from "./config-change-fields.js";
import { ErrorNotice, StatusBadge } from "./status.js";

interface Progress {
  session_id: string | null;
  of: number;
  /** The turn running now (1-based), 0 before the first. */
  current: number;
  statuses: string[];
  done: boolean;
}

const START: Progress = { session_id: null, of: 0, current: 0, statuses: [], done: false };

/** Folds one replay event into the progress shown. Pure. */
export function replayProgress(progress: Progress, event: ReplayEvent): Progress {
  switch (event.type) {
    case "replay":
      return { ...progress, session_id: event.session_id, of: event.turns };
    case "replay_turn":
      return { ...progress, current: event.turn_index, of: event.of };
    case "turn":
      return event.event.type === "turn_end"
        ? { ...progress, statuses: [...progress.statuses, event.event.status] }
        : progress;
    case "replay_done":
      return { ...progress, session_id: event.session_id, statuses: event.statuses, done: true };
    default: {
      const unhandled: never = event;
      void unhandled;
      return progress;
    }
  }
}

/**
 * Replays this session's user messages as a new session under changed settings, shows each turn
 * as it runs, then opens the two sessions in Compare.
 */
export function ReplayPanel({
  sessionId,
  config,
  onClose,
}: {
  sessionId: string;
  config: Record<string, unknown>;
  onClose: () => void;
}) {
  const [title, setTitle] = useState("");
  const [changes, setChanges] = useState(NO_CHANGES);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const controllerRef = useRef<AbortController | null>(null);
  useEffect(() => () => controllerRef.current?.abort(), []);
  const running = progress !== null && !progress.done && error === null;

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const controller = new AbortController();
    controllerRef.current = controller;
    setError(null);
    let state = START;
    setProgress(state);
    try {
      const overrides = configOverrides(config, changes);
      await streamReplay(
        sessionId,
        {
          ...(title.trim() ? { title: title.trim() } : {}),
          ...(overrides ? { config: overrides } : {}),
        },
        (replayEvent) => {
          state = replayProgress(state, replayEvent);
          setProgress(state);
        },
        controller.signal,
      );
      if (state.done && state.session_id) navigate(compareHref(sessionId, state.session_id));
      else setError(new Error("the replay's stream ended before it said it was done"));
    } catch (caught) {
      setError(isAbortError(caught) ? new Error("stopped; the turns that ran are kept") : caught);
    } finally {
      controllerRef.current = null;
    }
  };

  return (
    <form
      className="card derive-panel"
      data-testid="replay-panel"
      onSubmit={(event) => void onSubmit(event)}
    >
      <h3>Replay this session</h3>
      <p className="muted small">
        Sends this session's messages again, one turn each, to a new session with the settings
        below; then Compare opens with the two side by side.
      </p>
      <ConfigChangeFields
        source={config}
        title={title}
        onTitle={setTitle}
        changes={changes}
        onChange={setChanges}
        testIdPrefix="replay"
      />
      {progress ? (
        <div className="replay-progress" data-testid="replay-progress" role="status">
          <progress max={Math.max(1, progress.of)} value={progress.statuses.length} />
          <span>
            {progress.done
              ? `Done: ${progress.statuses.length} of ${progress.of} turns`
              : progress.current === 0
                ? "Starting…"
                : `Turn ${progress.current} of ${progress.of}…`}
          </span>
          {progress.statuses.map((status, index) => (
            // One badge per finished turn, in order; the list only grows.
            // biome-ignore lint/suspicious/noArrayIndexKey: append-only list
            <StatusBadge key={index} status={status} />
          ))}
          {progress.session_id ? (
            <span>
              <Link to={sessionHref(progress.session_id)}>the new session</Link>
              {" · "}
              <Link to={compareHref(sessionId, progress.session_id)}>Compare</Link>
            </span>
          ) : null}
        </div>
      ) : null}
      {error ? <ErrorNotice error={error} title="The replay did not finish" /> : null}
      <div className="derive-actions">
        <button
          type="submit"
          className="button button-primary"
          data-testid="replay-submit"
          disabled={running}
        >
          {running ? "Replaying…" : "Replay"}
        </button>
        {running ? (
          <button
            type="button"
            className="button button-danger"
            onClick={() => controllerRef.current?.abort()}
          >
            Stop
          </button>
        ) : (
          <button type="button" className="button" onClick={onClose}>
            Close
          </button>
        )}
      </div>
    </form>
  );
}
