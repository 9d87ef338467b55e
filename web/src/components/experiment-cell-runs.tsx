import { useCallback, useEffect, useMemo, useRef } from "react";
import { api } from "../api.js";
import type { CellRun, CellSummary } from "../api-types.js";
import { experimentCostLabel } from "../cost.js";
import { categoryLabel, onceEach, type RunOutcome, runOutcome } from "../experiment-matrix.js";
import { formatInt, formatPercent } from "../format.js";
import { pageOf } from "../paging.js";
import { Link } from "../router.js";
import { sessionHref } from "../routes.js";
import { usePagedList } from "../use-paged-list.js";
import { CostFigure } from "./cost-figure.js";
import { LoadMore } from "./load-more.js";
import { EmptyState, ErrorNotice, Loading } from "./status.js";

const OUTCOME_BADGE: Record<RunOutcome, string> = {
  passed: "badge-ok",
  failed: "badge-error",
  incomplete: "badge-warn",
};

function count(runs: readonly CellRun[], outcome: RunOutcome): number {
  return runs.filter((run) => runOutcome(run) === outcome).length;
}

/** Runs a page; a cell of thousands of runs is read on demand. */
export const CELL_RUNS_PAGE_SIZE = 100;

/** One configuration's runs: each run's outcome, why it failed, and a link to its session. */
export function ExperimentCellRuns({
  experimentId,
  cell,
  revision,
  onClose,
}: {
  experimentId: string;
  cell: CellSummary;
  /** Moves when runs of the experiment end (the page's report revision). */
  revision: number;
  onClose: () => void;
}) {
  const load = useCallback(
    (cursor: string | null, signal: AbortSignal) =>
      api
        // Failed first across the whole cell, by the server: not only among the pages read.
        .cellRuns(
          experimentId,
          cell.cell,
          { limit: CELL_RUNS_PAGE_SIZE, cursor, order: "failed_first" },
          signal,
        )
        .then((body) => pageOf(body, "sessions")),
    [experimentId, cell.cell],
  );
  const list = usePagedList<CellRun>(`${experimentId}\u0000${cell.cell}`, load);
  // While runs end, a run may move from one outcome to another between two pages (the server
  // orders failed ones first): it is shown once, where it was first shown, as it now stands.
  const runs = useMemo(() => onceEach(list.items), [list.items]);
  const panelRef = useRef<HTMLElement | null>(null);
  // Runs that ended after the first page was read may belong on an earlier page: said, so the
  // list can be read again, rather than re-read under the reader at each run.
  const readAt = useRef(revision);
  const { reload } = list;
  const outdated = list.loaded && revision !== readAt.current;
  const readAgain = () => {
    readAt.current = revision;
    reload();
  };

  // Opening a cell brings its runs into view (they sit below the matrix).
  useEffect(() => {
    panelRef.current?.scrollIntoView({ block: "nearest" });
  }, []);

  return (
    <section
      ref={panelRef}
      id="cell-runs"
      className="card cell-runs"
      data-testid="cell-runs"
      data-cell-id={cell.cell}
      aria-labelledby="cell-runs-heading"
    >
      <div className="panel-head">
        <h2 id="cell-runs-heading">
          Runs of <span className="cell-name">{cell.label}</span>
        </h2>
        <button type="button" className="button button-small" onClick={onClose}>
          Close
        </button>
      </div>
      {list.loaded ? (
        <p className="muted small run-tally" data-testid="run-tally">
          {list.hasMore ? (
            <>
              {formatInt(cell.successes)} of {formatInt(cell.runs)} scored runs passed; the first{" "}
              {formatInt(runs.length)} shown ({formatInt(count(runs, "passed"))} passed ·{" "}
              {formatInt(count(runs, "failed"))} failed
              {count(runs, "incomplete") > 0
                ? ` · ${formatInt(count(runs, "incomplete"))} incomplete, not counted`
                : ""}
              ), failed ones first.
            </>
          ) : (
            <>
              {formatInt(count(runs, "passed"))} passed · {formatInt(count(runs, "failed"))} failed
              {count(runs, "incomplete") > 0
                ? ` · ${formatInt(count(runs, "incomplete"))} incomplete (not counted)`
                : ""}
              . Failed runs first.
            </>
          )}
        </p>
      ) : null}
      {outdated ? (
        <p className="muted small" data-testid="cell-runs-outdated">
          Runs have ended since this list was read: some may belong higher up.{" "}
          <button type="button" className="button button-small" onClick={readAgain}>
            Read again
          </button>
        </p>
      ) : null}
      {list.error && !list.loaded ? (
        <ErrorNotice error={list.error} title="Could not load the runs" onRetry={list.reload} />
      ) : null}
      {list.loading && !list.loaded ? <Loading label="Loading runs…" /> : null}
      {list.loaded && runs.length === 0 ? <EmptyState>This cell has no runs.</EmptyState> : null}
      {runs.length > 0 ? (
        <div className="table-scroll">
          <table className="data-table cell-runs-table">
            <caption className="visually-hidden">Runs of {cell.label}</caption>
            <thead>
              <tr>
                <th scope="col">Scenario</th>
                <th scope="col">Category</th>
                <th scope="col" className="num">
                  Rep.
                </th>
                <th scope="col">Result</th>
                <th scope="col" className="num" title="Recall of the expected tool calls">
                  Tools
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col">Failures</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => {
                const outcome = runOutcome(run);
                return (
                  <tr
                    key={run.session_id}
                    data-testid="cell-run"
                    data-outcome={outcome}
                    data-session-id={run.session_id}
                  >
                    <th scope="row" className="scenario-cell">
                      <Link
                        to={sessionHref(run.session_id)}
                        data-testid="cell-run-link"
                        title={`Open the session of run ${run.run_key}`}
                      >
                        {run.scenario}
                      </Link>
                    </th>
                    <td>{categoryLabel(run.category)}</td>
                    <td className="num">{run.repetition}</td>
                    <td>
                      <span className={`badge ${OUTCOME_BADGE[outcome]}`}>{outcome}</span>
                    </td>
                    <td className="num">
                      {run.score ? formatPercent(run.score.tool_recall, 0) : "—"}
                    </td>
                    <td className="num">
                      {run.incomplete ? (
                        <span className="muted">—</span>
                      ) : (
                        <CostFigure label={experimentCostLabel(run.cost_usd, run.cost_source)} />
                      )}
                    </td>
                    <td className="failures-cell">
                      {run.score && run.score.failures.length > 0 ? (
                        <ul className="failure-list">
                          {[...new Set(run.score.failures)].map((failure) => (
                            <li key={failure}>{failure}</li>
                          ))}
                        </ul>
                      ) : outcome === "incomplete" ? (
                        <span className="muted">
                          not finished: still running, or stopped before its last turn ended
                        </span>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.loaded ? (
        <LoadMore list={list} pageSize={CELL_RUNS_PAGE_SIZE} what="runs" testId="load-more-runs" />
      ) : null}
    </section>
  );
}
