import { type FormEvent, useEffect, useId, useState } from "react";
import { api } from "../api.js";
import type { SuiteListing } from "../api-types.js";
import { rememberStart } from "../experiment-starts.js";
import { formatInt } from "../format.js";
import { navigate } from "../router.js";
import { experimentHref } from "../routes.js";
import { useResource } from "../use-resource.js";
import { EmptyState, ErrorNotice, Loading } from "./status.js";

const loadSuites = (signal: AbortSignal) => api.suites(signal);

/** A whole number from 1 to `max` typed in a field, or null. */
function wholeNumber(text: string, max: number): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const value = Number(text);
  return value >= 1 && value <= max ? value : null;
}

/**
 * Starts a suite the server knows (bundled or in a configured folder; never a path typed here):
 * pick the suite, its configurations and the repetitions; the experiment's page then follows it.
 */
export function NewExperimentForm({ onClose }: { onClose: () => void }) {
  const id = useId();
  const suites = useResource("suites", loadSuites);
  const [suiteName, setSuiteName] = useState("");
  const [cells, setCells] = useState<string[]>([]);
  const [repetitions, setRepetitions] = useState("");
  const [concurrency, setConcurrency] = useState("");
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const list = suites.data?.suites ?? [];
  const invalid = suites.data?.invalid ?? [];
  const suite: SuiteListing | undefined = list.find((s) => s.name === suiteName) ?? list[0];
  // A suite picked (or the first one shown): its configurations all ticked, its own settings.
  useEffect(() => {
    if (!suite) return;
    setSuiteName(suite.name);
    setCells(suite.cells.map((cell) => cell.id));
    setRepetitions(String(suite.repetitions));
    setConcurrency(String(suite.concurrency));
  }, [suite]);

  const reps = wholeNumber(repetitions, 1000);
  const parallel = wholeNumber(concurrency, 64);
  const runs = suite && reps !== null ? suite.scenarios * cells.length * reps : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!suite || reps === null || parallel === null || cells.length === 0) return;
    setStarting(true);
    setError(null);
    try {
      const started = await api.startExperiment({
        suite: suite.name,
        cells,
        repetitions: reps,
        concurrency: parallel,
      });
      rememberStart(started.experiment_id, started);
      navigate(experimentHref(started.experiment_id));
    } catch (failure) {
      setError(failure);
      setStarting(false);
    }
  };

  if (suites.error) {
    return (
      <ErrorNotice
        error={suites.error}
        title="Could not list the suites"
        onRetry={() => void suites.reload()}
      />
    );
  }
  if (!suites.data) return <Loading label="Loading suites…" />;
  const problems =
    invalid.length > 0 ? (
      <details className="notice notice-warn small" data-testid="suite-problems">
        <summary>
          {invalid.length} suite {invalid.length === 1 ? "file does" : "files do"} not parse
        </summary>
        <ul>
          {invalid.map((problem) => (
            <li key={problem.file}>
              <code>{problem.file}</code>: {problem.error}
            </li>
          ))}
        </ul>
      </details>
    ) : null;
  if (!suite) {
    return (
      <EmptyState>
        {problems}
        This server knows no suite. Put suite files in a folder named by <code>suites_dirs</code> in
        agent-lab.yaml, or start it with <code>agent-lab serve --suites DIR</code>.
      </EmptyState>
    );
  }

  const toggle = (cell: string, checked: boolean) =>
    setCells((current) =>
      checked
        ? suite.cells.map((c) => c.id).filter((c) => c === cell || current.includes(c))
        : current.filter((c) => c !== cell),
    );

  return (
    <form
      className="card new-experiment-form"
      data-testid="new-experiment-form"
      onSubmit={(e) => void submit(e)}
    >
      <div className="form-grid">
        <div className="field field-wide">
          <label htmlFor={`${id}-suite`}>Suite</label>
          <select
            id={`${id}-suite`}
            data-testid="suite-select"
            value={suite.name}
            onChange={(event) => setSuiteName(event.target.value)}
          >
            {list.map((item) => (
              <option key={item.name} value={item.name}>
                {item.name} ({item.file})
              </option>
            ))}
          </select>
          <small className="muted" data-testid="suite-facts">
            {suite.description ? `${suite.description} ` : ""}
            {formatInt(suite.scenarios)} scenarios
            {suite.categories.length > 0 ? ` in ${suite.categories.join(", ")}` : ""}.
          </small>
        </div>
        <fieldset className="field field-wide tools-fieldset">
          <legend>Configurations</legend>
          {suite.cells.map((cell) => (
            <label key={cell.id} className="checkbox">
              <input
                type="checkbox"
                data-testid="suite-cell"
                value={cell.id}
                checked={cells.includes(cell.id)}
                onChange={(event) => toggle(cell.id, event.target.checked)}
              />
              {cell.label}
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor={`${id}-repetitions`}>Repetitions</label>
          <input
            id={`${id}-repetitions`}
            data-testid="suite-repetitions"
            inputMode="numeric"
            value={repetitions}
            aria-invalid={reps === null}
            onChange={(event) => setRepetitions(event.target.value)}
          />
          {reps === null ? <small className="field-error">1 to 1000</small> : null}
        </div>
        <div className="field">
          <label htmlFor={`${id}-concurrency`}>Runs at once</label>
          <input
            id={`${id}-concurrency`}
            data-testid="suite-concurrency"
            inputMode="numeric"
            value={concurrency}
            aria-invalid={parallel === null}
            onChange={(event) => setConcurrency(event.target.value)}
          />
          {parallel === null ? <small className="field-error">1 to 64</small> : null}
        </div>
      </div>
      {problems}
      {error ? <ErrorNotice error={error} title="Could not start the experiment" /> : null}
      <div className="form-actions new-experiment-actions">
        <span className="muted small" data-testid="suite-run-count">
          {cells.length === 0
            ? "Tick at least one configuration."
            : runs !== null
              ? `${formatInt(runs)} runs; runs finished before are kept, not run again.`
              : ""}
        </span>
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
        <button
          type="submit"
          className="button button-primary"
          data-testid="start-experiment"
          disabled={starting || cells.length === 0 || reps === null || parallel === null}
        >
          {starting ? "Starting…" : "Start"}
        </button>
      </div>
    </form>
  );
}
