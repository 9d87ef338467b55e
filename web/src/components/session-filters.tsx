import { useEffect, useId, useRef, useState } from "react";
import { TOOL_INVOCATION_MODES } from "../api-types.js";
import { modeLabel } from "../format.js";
import {
  hasFilters,
  SESSION_STATUSES,
  type SessionFilterKey,
  type SessionFilters,
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

  // The URL changed by another way (back, a tag clicked, reset): the fields follow it.
  const { q, model, tag } = filters;
  useEffect(() => {
    setDrafts(draftsOf({ q, model, tag }));
  }, [q, model, tag]);

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

  return (
    <search className="session-filters" aria-label="Search and filter sessions">
      {typed("q", "Search titles", "e.g. weather", true)}
      <div className="field">
        <label htmlFor={`${id}-mode`}>Mode</label>
        <select
          id={`${id}-mode`}
          data-testid="filter-mode"
          value={filters.mode ?? ""}
          onChange={(event) => set("mode", event.target.value)}
        >
          <option value="">Any mode</option>
          {TOOL_INVOCATION_MODES.map((mode) => (
            <option key={mode} value={mode}>
              {modeLabel(mode)}
            </option>
          ))}
          {filters.mode && !(TOOL_INVOCATION_MODES as readonly string[]).includes(filters.mode) ? (
            <option value={filters.mode}>{filters.mode}</option>
          ) : null}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-status`}>Last turn</label>
        <select
          id={`${id}-status`}
          data-testid="filter-status"
          value={filters.status ?? ""}
          onChange={(event) => set("status", event.target.value)}
        >
          <option value="">Any status</option>
          {SESSION_STATUSES.map((status) => (
            <option key={status} value={status}>
              {status === "none" ? "no turns yet" : status.replace("_", " ")}
            </option>
          ))}
          {filters.status && !(SESSION_STATUSES as readonly string[]).includes(filters.status) ? (
            <option value={filters.status}>{filters.status}</option>
          ) : null}
        </select>
      </div>
      {typed("model", "Model", "e.g. sim")}
      {typed("tag", "Tag", "exact tag")}
      <div className="field">
        <label htmlFor={`${id}-from`}>Updated from</label>
        <input
          id={`${id}-from`}
          type="date"
          data-testid="filter-updated-from"
          value={filters.updated_from?.slice(0, 10) ?? ""}
          onChange={(event) => set("updated_from", event.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-to`}>Updated to</label>
        <input
          id={`${id}-to`}
          type="date"
          data-testid="filter-updated-to"
          value={filters.updated_to?.slice(0, 10) ?? ""}
          onChange={(event) => set("updated_to", event.target.value)}
        />
      </div>
      {filters.experiment ? (
        <div className="field">
          <span className="field-label">Experiment</span>
          <button
            type="button"
            className="tag-chip"
            data-testid="filter-experiment"
            title="Show sessions of every experiment"
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
