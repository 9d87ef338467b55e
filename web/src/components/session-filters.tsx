import { useEffect, useId, useRef, useState } from "react";
import { TOOL_INVOCATION_MODES } from "../api-types.js";
import { modeLabel } from "../format.js";
import {
  hasFilters,
  INCLUDE_EXPERIMENTS,
  localDayBound,
  SESSION_STATUSES,
  type SessionFilterKey,
  type SessionFilters,
  showsExperimentRuns,
  withFilter,
} from "../session-list-query.js";

/** Typing waits this long for a pause before the list is asked again. */
export const TYPING_PAUSE_MS = 300;

const TYPED = ["q", "model", "tag"] as const;
type TypedKey = (typeof TYPED)[number];
type Drafts = Record<TypedKey, string>;

const draftsOf = (filters: Partial<Record<TypedKey, string | undefined>>): Drafts => ({
  q: filters.q ?? "",
  model: filters.model ?? "",
  tag: filters.tag ?? "",
});

const DATES = ["updated_from", "updated_to"] as const;
type DateKey = (typeof DATES)[number];
/** The day each date field shows (YYYY-MM-DD, or empty). */
type Days = Record<DateKey, string>;

/** The day a bound in the URL names: its first ten characters (a date, or a local timestamp). */
const daysOf = (from: string | undefined, to: string | undefined): Days => ({
  updated_from: from?.slice(0, 10) ?? "",
  updated_to: to?.slice(0, 10) ?? "",
});

/**
 * Whether a date field's value is one to apply: empty (the bound removed) or a year of four
 * significant digits. A year typed into the field passes through 0002, 0020 and 0202 on its way
 * to 2026, each a valid date the list was asked for.
 */
const isComplete = (day: string) => day === "" || /^[1-9]\d{3}-/.test(day);

/**
 * Search and filters of the sessions list. The URL holds the filters in force (`filters`); typed
 * fields keep a draft that is applied after a pause in typing, choices apply at once.
 */
export function SessionFiltersBar({
  filters,
  onChange,
}: {
  filters: SessionFilters;
  onChange: (filters: SessionFilters) => void;
}) {
  const id = useId();
  const [drafts, setDrafts] = useState<Drafts>(() => draftsOf(filters));
  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  const [days, setDays] = useState<Days>(() => daysOf(filters.updated_from, filters.updated_to));

  // The URL changed by another way (back, a tag clicked, reset): the fields follow it.
  const { q, model, tag, updated_from, updated_to } = filters;
  useEffect(() => {
    setDrafts(draftsOf({ q, model, tag }));
  }, [q, model, tag]);
  // Each field follows its own bound only: a day half typed into the other stays.
  useEffect(() => {
    setDays((previous) => ({ ...previous, updated_from: updated_from?.slice(0, 10) ?? "" }));
  }, [updated_from]);
  useEffect(() => {
    setDays((previous) => ({ ...previous, updated_to: updated_to?.slice(0, 10) ?? "" }));
  }, [updated_to]);

  // A date is applied, as typing is, after a pause, and only once its year is whole.
  useEffect(() => {
    const current = filtersRef.current;
    const changed = DATES.filter(
      (name) => isComplete(days[name]) && days[name] !== (current[name]?.slice(0, 10) ?? ""),
    );
    if (changed.length === 0) return;
    const timer = setTimeout(() => {
      let next = filtersRef.current;
      for (const name of changed) {
        const day = days[name];
        next = withFilter(
          next,
          name,
          day === "" ? "" : localDayBound(day, name === "updated_from" ? "from" : "to"),
        );
      }
      onChangeRef.current(next);
    }, TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [days]);

  useEffect(() => {
    const current = filtersRef.current;
    const changed = TYPED.filter((name) => drafts[name].trim() !== (current[name] ?? "").trim());
    if (changed.length === 0) return;
    const timer = setTimeout(() => {
      let next = filtersRef.current;
      for (const name of changed) next = withFilter(next, name, drafts[name].trim());
      onChangeRef.current(next);
    }, TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [drafts]);

  const set = (name: SessionFilterKey, value: string) => onChange(withFilter(filters, name, value));
  const typed = (name: TypedKey, label: string, placeholder: string, wide = false) => (
    <div className={`field${wide ? " filter-search" : ""}`}>
      <label htmlFor={`${id}-${name}`}>{label}</label>
      <input
        id={`${id}-${name}`}
        type={name === "q" ? "search" : "text"}
        data-testid={`filter-${name}`}
        placeholder={placeholder}
        value={drafts[name]}
        onChange={(event) => setDrafts((previous) => ({ ...previous, [name]: event.target.value }))}
        onKeyDown={(event) => {
          if (event.key === "Enter") set(name, drafts[name].trim());
        }}
      />
    </div>
  );

  // The input shows a date; the URL holds that local day's bound (the API takes a date or a
  // timestamp, and a timestamp in the URL shows as its day).
  const dateField = (name: DateKey, label: string) => (
    <div className="field">
      <label htmlFor={`${id}-${name}`}>{label}</label>
      <input
        id={`${id}-${name}`}
        type="date"
        title="A day where you are, as the list shows times"
        data-testid={`filter-${name.replace("_", "-")}`}
        value={days[name]}
        onChange={(event) => {
          const day = event.target.value;
          setDays((previous) => ({ ...previous, [name]: day }));
        }}
      />
    </div>
  );

  // A value the list does not offer (typed into the URL) stays shown, so the server's error about
  // it reads against what the field says.
  const choice = (
    name: "mode" | "status",
    label: string,
    any: string,
    values: readonly string[],
    labelOf: (value: string) => string,
  ) => {
    const value = filters[name];
    return (
      <div className="field">
        <label htmlFor={`${id}-${name}`}>{label}</label>
        <select
          id={`${id}-${name}`}
          data-testid={`filter-${name}`}
          value={value ?? ""}
          onChange={(event) => set(name, event.target.value)}
        >
          <option value="">{any}</option>
          {values.map((item) => (
            <option key={item} value={item}>
              {labelOf(item)}
            </option>
          ))}
          {value && !values.includes(value) ? <option value={value}>{value}</option> : null}
        </select>
      </div>
    );
  };

  return (
    <search className="session-filters" aria-label="Search and filter sessions">
      {typed("q", "Search titles", "e.g. weather", true)}
      {choice("mode", "Mode", "Any mode", TOOL_INVOCATION_MODES, modeLabel)}
      {choice("status", "Last turn", "Any status", SESSION_STATUSES, (status) =>
        status === "none" ? "no turns yet" : status.replace("_", " "),
      )}
      {typed("model", "Model", "e.g. sim")}
      {typed("tag", "Tag", "exact tag")}
      {dateField("updated_from", "Updated from")}
      {dateField("updated_to", "Updated to")}
      <label
        className="checkbox filter-include"
        title={
          filters.experiment
            ? "The experiment filter shows that experiment's runs"
            : "Sessions an experiment ran (they live on the Experiments page)"
        }
      >
        <input
          type="checkbox"
          data-testid="filter-include-experiments"
          checked={showsExperimentRuns(filters)}
          disabled={filters.experiment !== undefined}
          onChange={(event) => set("include", event.target.checked ? INCLUDE_EXPERIMENTS : "")}
        />
        Show experiment runs
      </label>
      {filters.experiment ? (
        <div className="field">
          <span className="field-label">Experiment</span>
          <button
            type="button"
            className="tag-chip"
            data-testid="filter-experiment"
            title="Show sessions of every experiment"
            aria-label={`Remove the experiment filter ${filters.experiment}`}
            onClick={() => set("experiment", "")}
          >
            {filters.experiment} ×
          </button>
        </div>
      ) : null}
      {hasFilters(filters) ? (
        <button
          type="button"
          className="button button-small filter-reset"
          data-testid="filter-reset"
          onClick={() => onChange({})}
        >
          Reset filters
        </button>
      ) : null}
    </search>
  );
}
