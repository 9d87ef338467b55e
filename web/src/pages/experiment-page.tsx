import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ApiError, api, isAbortError } from "../api.js";
import type { CellSummary } from "../api-types.js";
import { ExperimentCellCompare } from "../components/experiment-cell-compare.js";
import { ExperimentCellRuns } from "../components/experiment-cell-runs.js";
import { ExperimentMatrixTable } from "../components/experiment-matrix-table.js";
import { ExperimentMetricsTable } from "../components/experiment-metrics-table.js";
import { ExperimentProgressPanel } from "../components/experiment-progress-panel.js";
import { ExperimentScenarioView } from "../components/experiment-scenario-view.js";
import { EmptyState, ErrorNotice, Loading } from "../components/status.js";
import { matrixCategories, toggleCompare } from "../experiment-matrix.js";
import { runsDone } from "../experiment-progress.js";
import { formatDateTime, formatInt } from "../format.js";
import { Link, navigate } from "../router.js";
import { type ExperimentView, experimentHref } from "../routes.js";
import { searchFromFilters } from "../session-list-query.js";
import { useExperimentLive } from "../use-experiment-live.js";
import { useResource } from "../use-resource.js";

/** While runs end, the report is read again at most this often. */
const REPORT_REFRESH_MS = 750;

/**
 * One experiment: its progress while it runs, the success matrix (configurations × scenario
 * categories), the metrics of each configuration, one configuration's runs (`?cell=`), two
 * compared (`?compare=&compare=`) and one scenario's runs side by side (`?scenario=`). The view
 * lives in the address, so it can be shared and survives a reload.
 */
export function ExperimentPage({
  id,
  cell,
  compare,
  scenario,
}: {
  id: string;
  cell: string | null;
  compare: string[];
  scenario: string | null;
}) {
  const live = useExperimentLive(id);
  const underWay = live.phase === "running" || live.phase === "connecting";
  // The report waits for the events' first word, and, while the experiment runs, for its first
  // finished run: before that no run has stored a session and the report would be a 404.
  const waiting =
    live.phase === "connecting" ||
    (live.phase === "running" && (live.progress === null || runsDone(live.progress) === 0));
  const load = useCallback((signal: AbortSignal) => api.getExperiment(id, signal), [id]);
  const resource = useResource(waiting ? null : `experiment:${id}`, load);
  const report = resource.data;
  const categories = useMemo(() => (report ? matrixCategories(report.cells) : []), [report]);
  const refreshed = useReportRefresh(live, resource.reload);
  const outside = useOutsideRuns(id, !underWay && Boolean(report), resource.reload);
  const { arrived } = outside;
  // Moves with every read of the report after runs ended, this server's or another process's:
  // the views that follow (an open cell's runs, a scenario) learn of both.
  const revision = refreshed + outside.reads;

  const show = (view: ExperimentView) =>
    navigate(experimentHref(id, { cell, compare, scenario, ...view }), { replace: true });
  const progress = <ExperimentProgressPanel id={id} live={live} />;

  const byId = (cellId: string | null): CellSummary | undefined =>
    cellId === null ? undefined : report?.cells.find((summary) => summary.cell === cellId);
  const openCell = byId(cell);
  const [first, second] = compare.map((cellId) => byId(cellId));

  const missing = resource.error instanceof ApiError && resource.error.status === 404;
  if (live.phase === "running" && (waiting || missing)) {
    // Started a moment ago: no run has finished yet.
    return (
      <NoReport>
        {progress}
        <Loading label="Waiting for the first run…" />
      </NoReport>
    );
  }
  if (resource.error) {
    return (
      <NoReport>
        {missing ? (
          <EmptyState>
            No run carries the experiment <code>{id}</code>.{" "}
            <Link to="/experiments">See every experiment</Link>
          </EmptyState>
        ) : (
          <ErrorNotice
            error={resource.error}
            title="Could not load the experiment"
            onRetry={() => void resource.reload()}
          />
        )}
      </NoReport>
    );
  }
  if (!report) {
    return (
      <NoReport>
        <Loading label="Scoring the runs…" />
      </NoReport>
    );
  }

  const scored = report.cells.reduce((sum, summary) => sum + summary.runs, 0);
  return (
    <div className="page experiment-page">
      <p className="breadcrumb">
        <Link to="/experiments">← Experiments</Link>
      </p>
      <div className="page-head">
        <div>
          <h1>
            {report.suite}{" "}
            {report.simulated ? (
              <span
                className="badge badge-simulated"
                data-testid="simulated-badge"
                title="At least one configuration ran on the simulated model"
              >
                simulated
              </span>
            ) : null}
          </h1>
          <p className="muted small experiment-facts">
            <code className="experiment-id">{report.experiment_id}</code> ·{" "}
            {formatInt(report.cells.length)}{" "}
            {report.cells.length === 1 ? "configuration" : "configurations"} · {formatInt(scored)}{" "}
            scored {scored === 1 ? "run" : "runs"} · scored{" "}
            <time dateTime={report.generated_at}>{formatDateTime(report.generated_at)}</time>
          </p>
        </div>
        <div className="page-actions">
          <Link
            to={`/${searchFromFilters({ experiment: report.experiment_id })}`}
            className="button"
            data-testid="experiment-sessions"
          >
            Its sessions
          </Link>
          <button
            type="button"
            className="button"
            onClick={() => void resource.reload()}
            disabled={resource.loading}
          >
            {resource.loading ? "Refreshing…" : "Refresh"}
          </button>
        </div>
      </div>

      {progress}

      {arrived !== null ? (
        <p className="notice" data-testid="outside-runs">
          {/* One flex item: the notice's gap would otherwise part the code and the time from
              the words around them. */}
          <span>
            Runs are arriving from another process (<code>agent-lab bench</code> or a worker), the
            latest at <time dateTime={arrived}>{formatDateTime(arrived)}</time>: the report follows
            them.
          </span>
        </p>
      ) : null}

      {report.simulated ? (
        <p className="notice notice-sim" data-testid="simulated-note">
          Simulated: some runs used the embedded simulated model. Its answers are deterministic and
          its timings and token counts are not a real endpoint's; use it to check the suite, not to
          rank models.
        </p>
      ) : null}
      {report.incomplete > 0 ? (
        <p className="notice notice-warn" data-testid="incomplete-note">
          {formatInt(report.incomplete)} {report.incomplete === 1 ? "run is" : "runs are"} not
          finished (still running, or stopped before {report.incomplete === 1 ? "its" : "their"}{" "}
          last turn ended) and not counted.
          {underWay
            ? " The report follows the runs as they end."
            : " If the experiment still runs elsewhere, refresh to see them once they end; if it was stopped, run the same bench command again to finish them."}
        </p>
      ) : null}

      {report.cells.length === 0 ? (
        <EmptyState>No configuration has a run yet.</EmptyState>
      ) : (
        <>
          <section className="experiment-section" aria-labelledby="matrix-heading">
            <div className="section-head">
              <h2 id="matrix-heading">Success by scenario category</h2>
              <p className="muted small">
                Pick a configuration to see its runs; tick two to compare them.
              </p>
            </div>
            <ExperimentMatrixTable
              cells={report.cells}
              categories={categories}
              openCell={openCell ? openCell.cell : null}
              compare={compare}
              onOpen={(cellId) => show({ cell: cellId === cell ? null : cellId })}
              onToggleCompare={(cellId, checked) =>
                show({ compare: toggleCompare(compare, cellId, checked) })
              }
            />
            <SuccessLegend />
          </section>

          {first && second ? (
            <ExperimentCellCompare a={first} b={second} onClose={() => show({ compare: [] })} />
          ) : compare.length === 1 && first ? (
            <p className="muted small compare-hint">
              Tick one more configuration to compare it with <strong>{first.label}</strong>.
            </p>
          ) : null}

          {openCell ? (
            <ExperimentCellRuns
              key={openCell.cell}
              experimentId={report.experiment_id}
              cell={openCell}
              revision={revision}
              onClose={() => {
                const opened = openCell.cell;
                show({ cell: null });
                // Back to the configuration that opened it, not to the top of the page.
                document
                  .querySelector<HTMLButtonElement>(
                    `tr[data-cell-id="${CSS.escape(opened)}"] button.cell-button`,
                  )
                  ?.focus();
              }}
            />
          ) : null}

          <ExperimentScenarioView
            experimentId={report.experiment_id}
            cells={report.cells}
            scenario={scenario}
            revision={revision}
            onPick={(picked) => show({ scenario: picked })}
          />

          <section className="experiment-section" aria-labelledby="metrics-heading">
            <div className="section-head">
              <h2 id="metrics-heading">Metrics per configuration</h2>
              <p className="muted small">
                Over finished runs. TTFT is each turn's first token; wall is each turn's time;
                fallbacks and tool errors are per tool execution.
              </p>
            </div>
            <ExperimentMetricsTable cells={report.cells} />
          </section>
        </>
      )}
    </div>
  );
}

/**
 * Reads the report again as runs end (at most every REPORT_REFRESH_MS) and once more when the
 * experiment ends; returns a number that moves with each of those reads, for views that follow.
 */
function useReportRefresh(
  live: { phase: string; progress: { finished: number; skipped: number; total: number } | null },
  reload: () => Promise<void>,
): number {
  const reloadRef = useRef(reload);
  reloadRef.current = reload;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const [revision, setRevision] = useState(0);
  const following = live.phase !== "idle" && live.phase !== "connecting";
  const done = live.progress ? runsDone(live.progress) : -1;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs ending and the phase changing are the triggers.
  useEffect(() => {
    if (!following || timer.current !== null) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setRevision((value) => value + 1);
      void reloadRef.current();
    }, REPORT_REFRESH_MS);
  }, [following, done, live.phase]);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
    },
    [],
  );
  return revision;
}

/** How often a page that follows no run of this server looks for runs another process stored. */
const OUTSIDE_POLL_MS = 3_000;

/**
 * Runs another process stores (`agent-lab bench` against this database, a worker) send this
 * server no events: while `watching`, the experiment's `revision` is read (one grouped query) and
 * the report read again when it moves. Gives the time of the latest such run, once one arrived,
 * and how many times the report was read again for them.
 */
function useOutsideRuns(
  id: string,
  watching: boolean,
  reload: () => Promise<void>,
): { arrived: string | null; reads: number } {
  const reloadRef = useRef(reload);
  reloadRef.current = reload;
  const [arrived, setArrived] = useState<string | null>(null);
  const [reads, setReads] = useState(0);
  useEffect(() => {
    if (!watching) return;
    const controller = new AbortController();
    let seen: number | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const look = async () => {
      try {
        const { experiments } = await api.listExperiments({ limit: 1 }, controller.signal, id);
        const item = experiments[0];
        if (item !== undefined) {
          if (seen !== null && item.revision !== seen) {
            setArrived(item.last_updated_at);
            setReads((value) => value + 1);
            void reloadRef.current();
          }
          seen = item.revision;
        }
      } catch (error) {
        if (isAbortError(error)) return;
        // A failed look is tried again at the next tick.
      }
      if (!controller.signal.aborted) timer = setTimeout(() => void look(), OUTSIDE_POLL_MS);
    };
    void look();
    return () => {
      controller.abort();
      if (timer !== null) clearTimeout(timer);
    };
  }, [id, watching]);
  return { arrived, reads };
}

/** The page while there is no report to show: the way back, a heading, and why. */
function NoReport({ children }: { children: ReactNode }) {
  return (
    <div className="page experiment-page">
      <p className="breadcrumb">
        <Link to="/experiments">← Experiments</Link>
      </p>
      <h1>Experiment</h1>
      {children}
    </div>
  );
}

function SuccessLegend() {
  return (
    <ul className="success-legend small" aria-label="Colours of the success rates">
      <li>
        <span className="legend-chip success-high" aria-hidden="true" /> ≥ 90%
      </li>
      <li>
        <span className="legend-chip success-good" aria-hidden="true" /> ≥ 70%
      </li>
      <li>
        <span className="legend-chip success-mid" aria-hidden="true" /> ≥ 40%
      </li>
      <li>
        <span className="legend-chip success-low" aria-hidden="true" /> below 40%
      </li>
    </ul>
  );
}
