import { useState } from "react";
import { api, errorMessage } from "../api.js";
import { progressShares, progressSummary } from "../experiment-progress.js";
import type { ExperimentLive } from "../use-experiment-live.js";

const HEADINGS = {
  connecting: "Connecting to the experiment…",
  running: "Running",
  done: "Finished",
  cancelled: "Cancelled",
  error: "Progress unavailable",
  idle: "",
} as const;

/**
 * A running experiment's progress: a bar of finished, failed and running runs, the counts, the run
 * that ended last, and Cancel. After the end it says how it ended; an idle experiment (nothing
 * running under its id) shows nothing.
 */
export function ExperimentProgressPanel({ id, live }: { id: string; live: ExperimentLive }) {
  const [cancelling, setCancelling] = useState(false);
  const [cancelError, setCancelError] = useState<unknown>(null);
  const { phase, progress, detail } = live;
  if (phase === "idle") return null;

  const cancel = async () => {
    setCancelling(true);
    setCancelError(null);
    try {
      await api.cancelExperiment(id);
    } catch (error) {
      setCancelError(error);
    } finally {
      setCancelling(false);
    }
  };

  const shares = progress ? progressShares(progress) : null;
  const done = shares ? Math.round(shares.finished + shares.failed) : 0;
  return (
    <section
      className={`experiment-progress experiment-progress-${phase}`}
      data-testid="experiment-progress"
      data-phase={phase}
      aria-label="Experiment progress"
    >
      <div className="experiment-progress-head">
        <h2>{HEADINGS[phase]}</h2>
        {phase === "running" || phase === "connecting" ? (
          <button
            type="button"
            className="button button-small button-danger"
            data-testid="experiment-cancel"
            onClick={() => void cancel()}
            disabled={cancelling || phase === "connecting"}
          >
            {cancelling ? "Cancelling…" : "Cancel"}
          </button>
        ) : null}
        {phase === "error" ? (
          <button type="button" className="button button-small" onClick={live.reconnect}>
            Reconnect
          </button>
        ) : null}
      </div>
      {shares ? (
        <div
          className="progress-bar"
          role="progressbar"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={done}
          aria-label="Runs done"
        >
          <span className="progress-finished" style={{ width: `${shares.finished}%` }} />
          <span className="progress-failed" style={{ width: `${shares.failed}%` }} />
          <span className="progress-running" style={{ width: `${shares.running}%` }} />
        </div>
      ) : null}
      {progress ? (
        <p className="small" data-testid="experiment-progress-summary">
          {progressSummary(progress)}
        </p>
      ) : null}
      {progress?.last ? (
        <p className="small muted" data-testid="experiment-progress-last">
          Last run: <code>{progress.last.run_key}</code>{" "}
          <span className={progress.last.success ? "run-passed" : "run-failed"}>
            {progress.last.success ? "passed" : "did not pass"}
          </span>
        </p>
      ) : null}
      {phase === "cancelled" ? (
        <p className="small">Runs that finished are kept; starting the suite again resumes it.</p>
      ) : null}
      {(phase === "error" || phase === "done") && detail ? (
        <p
          className="small notice-error-text"
          role="alert"
          data-testid="experiment-progress-detail"
        >
          {detail}
        </p>
      ) : null}
      {cancelError ? (
        <p className="small notice-error-text" role="alert">
          Could not cancel: {errorMessage(cancelError)}
        </p>
      ) : null}
    </section>
  );
}
