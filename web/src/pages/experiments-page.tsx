import { useState } from "react";
import { api } from "../api.js";
import type { ExperimentListRow } from "../api-types.js";
import { LoadMore } from "../components/load-more.js";
import { NewExperimentForm } from "../components/new-experiment-form.js";
import { EmptyState, ErrorNotice, Loading } from "../components/status.js";
import { progressSummary } from "../experiment-progress.js";
import { formatDateTime, formatInt } from "../format.js";
import { pageOf } from "../paging.js";
import { Link } from "../router.js";
import { experimentHref } from "../routes.js";
import { usePagedList } from "../use-paged-list.js";

export const EXPERIMENTS_PAGE_SIZE = 50;

const loadExperiments = (cursor: string | null, signal: AbortSignal) =>
  api
    .listExperiments({ limit: EXPERIMENTS_PAGE_SIZE, cursor }, signal)
    .then((body) => pageOf(body, "experiments"));

export function ExperimentsPage() {
  const list = usePagedList<ExperimentListRow>("experiments", loadExperiments);
  const experiments = list.items;
  const [creating, setCreating] = useState(false);
  return (
    <div className="page experiments-page">
      <div className="page-head">
        <h1>Experiments</h1>
        <div className="page-actions">
          <button
            type="button"
            className="button"
            onClick={() => void list.reload()}
            disabled={list.loading}
          >
            Refresh
          </button>
          <button
            type="button"
            className="button button-primary"
            data-testid="new-experiment"
            aria-expanded={creating}
            onClick={() => setCreating((open) => !open)}
          >
            New experiment
          </button>
        </div>
      </div>
      {creating ? <NewExperimentForm onClose={() => setCreating(false)} /> : null}
      <p className="muted page-intro">
        A suite of scenarios run across modes and models, many times. Every run is an ordinary
        session tagged with its experiment, so its transcript, tool calls and timings are one click
        away.
      </p>
      {list.error && !list.loaded ? (
        <ErrorNotice error={list.error} title="Could not load experiments" onRetry={list.reload} />
      ) : null}
      {list.loading && !list.loaded ? <Loading label="Loading experiments…" /> : null}
      {list.loaded && experiments.length === 0 ? (
        <EmptyState>
          No experiments yet. Start one with <strong>New experiment</strong> (or{" "}
          <code>agent-lab bench</code>) and its runs show up here, scored and summarized per
          configuration.
        </EmptyState>
      ) : null}
      {experiments.length > 0 ? (
        <div className="table-scroll table-card">
          <table className="data-table experiments-table">
            <caption className="visually-hidden">Experiments, most recent first</caption>
            <thead>
              <tr>
                <th scope="col">Suite</th>
                <th scope="col">Experiment</th>
                <th
                  scope="col"
                  className="num"
                  title="Sessions tagged with the experiment, unfinished and retried runs included"
                >
                  Sessions
                </th>
                <th scope="col">Started</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              {experiments.map((experiment) => (
                <tr
                  key={experiment.id}
                  data-testid="experiment-row"
                  data-experiment-id={experiment.id}
                  data-running={experiment.running ? "true" : undefined}
                >
                  <th scope="row" className="title-cell">
                    <Link to={experimentHref(experiment.id)} data-testid="experiment-link">
                      {experiment.suite}
                    </Link>
                    {experiment.running ? (
                      <>
                        {" "}
                        <span
                          className="badge badge-running"
                          data-testid="experiment-running"
                          title={
                            experiment.progress ? progressSummary(experiment.progress) : undefined
                          }
                        >
                          running
                        </span>
                      </>
                    ) : recentlyWritten(experiment.last_updated_at) ? (
                      <>
                        {" "}
                        <span
                          className="badge"
                          data-testid="experiment-active"
                          title="A run of it was stored in the last minute, by another process (agent-lab bench or a worker)"
                        >
                          runs arriving
                        </span>
                      </>
                    ) : null}
                  </th>
                  <td className="id-cell">
                    <code>{experiment.id}</code>
                  </td>
                  <td className="num">{formatInt(experiment.sessions)}</td>
                  <td className="nowrap">
                    <time dateTime={experiment.first_created_at}>
                      {formatDateTime(experiment.first_created_at)}
                    </time>
                  </td>
                  <td className="nowrap">
                    <time dateTime={experiment.last_created_at}>
                      {formatDateTime(experiment.last_created_at)}
                    </time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.loaded ? (
        <LoadMore
          list={list}
          pageSize={EXPERIMENTS_PAGE_SIZE}
          what="experiments"
          testId="load-more-experiments"
        />
      ) : null}
    </div>
  );
}

/** Runs stored within this long by a process other than this server: the experiment is under way. */
const ACTIVE_WINDOW_MS = 60_000;

const recentlyWritten = (at: string) => Date.now() - Date.parse(at) < ACTIVE_WINDOW_MS;
