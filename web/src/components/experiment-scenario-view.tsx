import { useEffect, useId, useMemo, useRef } from "react";
import { ApiError, api } from "../api.js";
import type { CellSummary, ScenarioRun } from "../api-types.js";
import { categoryLabel } from "../experiment-matrix.js";
import { argumentsText, cellTally, runOutcome, scenarioRows } from "../experiment-scenarios.js";
import { Link, sessionHref } from "../router.js";
import { useResource } from "../use-resource.js";
import { EmptyState, ErrorNotice, Loading } from "./status.js";

/**
 * One scenario's runs in every configuration side by side (promptfoo's matrix): a column per
 * configuration, a row per repetition, each run with its verdict, the failing checks, the tool
 * calls with their arguments and the final answer. The scenario lives in the address
 * (`?scenario=`). `revision` changes when runs end, so a running experiment's view follows it.
 */
export function ExperimentScenarioView({
  experimentId,
  cells,
  scenario,
  revision,
  onPick,
}: {
  experimentId: string;
  cells: readonly CellSummary[];
  scenario: string | null;
  revision: number;
  onPick: (scenario: string | null) => void;
}) {
  const id = useId();
  const cellIds = cells.map((cell) => cell.cell).join("\n");
  // useResource keeps the latest loader and reloads on its key: the loaders need no memo.
  const list = useResource(`scenarios:${experimentId}:${cellIds}`, (signal) =>
    api.scenarios(experimentId, signal).then((body) => body.scenarios),
  );
  const runs = useResource(
    scenario === null ? null : `scenario:${experimentId}:${scenario}`,
    (signal) => api.scenarioRuns(experimentId, scenario ?? "", signal),
  );
  // Runs ended: read again, keeping what is shown until the new answer is in.
  const { reload: reloadList } = list;
  const { reload: reloadRuns } = runs;
  const seen = useRef(revision);
  useEffect(() => {
    if (seen.current === revision) return;
    seen.current = revision;
    void reloadList();
    void reloadRuns();
  }, [revision, reloadList, reloadRuns]);
  const options = list.data ?? [];
  const categories = useMemo(() => [...new Set(options.map((o) => o.category))], [options]);
  const known = scenario === null || options.some((o) => o.scenario === scenario);

  return (
    <section
      className="experiment-section"
      aria-labelledby={`${id}-heading`}
      data-testid="scenario-view"
    >
      <div className="section-head">
        <h2 id={`${id}-heading`}>Per scenario, side by side</h2>
        <p className="muted small">
          Every configuration's runs of one scenario: verdict, failing checks, tool calls and
          answer.
        </p>
      </div>
      <div className="field scenario-picker">
        <label htmlFor={`${id}-scenario`}>Scenario</label>
        <select
          id={`${id}-scenario`}
          data-testid="scenario-select"
          value={scenario ?? ""}
          disabled={!list.data && !scenario}
          onChange={(event) => onPick(event.target.value || null)}
        >
          <option value="">{list.data ? "Pick a scenario…" : "Loading scenarios…"}</option>
          {categories.map((category) => (
            <optgroup key={category} label={categoryLabel(category)}>
              {options
                .filter((option) => option.category === category)
                .map((option) => (
                  <option key={option.scenario} value={option.scenario}>
                    {option.scenario}
                  </option>
                ))}
            </optgroup>
          ))}
          {!known && scenario ? <option value={scenario}>{scenario}</option> : null}
        </select>
      </div>
      {list.error ? (
        <ErrorNotice
          error={list.error}
          title="Could not list the scenarios"
          onRetry={() => void list.reload()}
        />
      ) : null}
      {list.data && options.length === 0 ? (
        <EmptyState>This experiment has no runs yet, so there is no scenario to show.</EmptyState>
      ) : null}
      {scenario === null ? null : runs.error ? (
        runs.error instanceof ApiError && runs.error.status === 404 ? (
          <EmptyState>
            <span data-testid="scenario-missing">
              No run of the scenario <code>{scenario}</code> in this experiment.
            </span>
          </EmptyState>
        ) : (
          <ErrorNotice
            error={runs.error}
            title="Could not load the scenario's runs"
            onRetry={() => void runs.reload()}
          />
        )
      ) : runs.data ? (
        <ScenarioMatrix response={runs.data} />
      ) : (
        <Loading label="Loading the scenario's runs…" />
      )}
    </section>
  );
}

function ScenarioMatrix({ response }: { response: Parameters<typeof scenarioRows>[0] }) {
  const rows = scenarioRows(response);
  if (rows.length === 0) {
    return <EmptyState>No configuration has run this scenario yet.</EmptyState>;
  }
  return (
    <div className="table-scroll table-card">
      <table className="data-table scenario-matrix" data-testid="scenario-matrix">
        <caption className="visually-hidden">
          Runs of {response.scenario} ({response.category}), a column per configuration
        </caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            {response.cells.map((cell) => {
              return (
                <th scope="col" key={cell.cell} data-testid="scenario-cell">
                  <span className="scenario-cell-label">{cell.label}</span>
                  <span className="muted small scenario-cell-tally">{cellTally(cell)}</span>
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.repetition}>
              <th scope="row" className="nowrap">
                #{row.repetition}
              </th>
              {row.cells.map((cellRuns, index) => (
                <td key={response.cells[index]?.cell ?? index} className="scenario-slot">
                  {cellRuns.length === 0 ? <span className="muted small">not run</span> : null}
                  {cellRuns.map((run) => (
                    <ScenarioRunCard key={run.session_id} run={run} />
                  ))}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ScenarioRunCard({ run }: { run: ScenarioRun }) {
  const outcome = runOutcome(run);
  // Turn numbers only when the scenario has more than one turn.
  const turns = new Set(run.tool_calls.map((call) => call.turn)).size > 1;
  return (
    <article
      className={`scenario-run scenario-run-${outcome}`}
      data-testid="scenario-run"
      data-outcome={outcome}
    >
      <p className="scenario-run-head">
        <span className={`badge badge-${outcome}`}>{outcome}</span>{" "}
        <Link to={sessionHref(run.session_id)} className="small" data-testid="scenario-run-link">
          session
        </Link>
      </p>
      {run.failures.length > 0 ? (
        <ul className="scenario-failures small" data-testid="scenario-failures">
          {run.failures.map((failure, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: two checks can fail with one message.
            <li key={index}>{failure}</li>
          ))}
        </ul>
      ) : null}
      {run.tool_calls.length > 0 ? (
        <ol className="scenario-calls small" data-testid="scenario-calls">
          {run.tool_calls.map((call, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a call may repeat with one text.
            <li key={index} className={call.ok === false ? "call-failed" : "call-ok"}>
              {turns ? <span className="muted">turn {call.turn}: </span> : null}
              <code>
                {call.name}({argumentsText(call.arguments)})
              </code>
              {call.ok === false ? <span className="run-failed"> failed</span> : null}
              {call.ok === null ? <span className="muted"> not run</span> : null}
            </li>
          ))}
        </ol>
      ) : (
        <p className="muted small">No tool calls.</p>
      )}
      {run.answer ? (
        <div className="scenario-answer small" data-testid="scenario-answer">
          {run.answer}
        </div>
      ) : (
        <p className="muted small">No final answer.</p>
      )}
    </article>
  );
}
