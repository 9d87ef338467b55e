import { useId, useMemo, useState } from "react";
import type { AuditRecord } from "../api-types.js";
import { formatClock, prettyJson } from "../format.js";
import { EmptyState } from "./status.js";

/** A colour family for an audit event name, by what it is about. */
export function auditCategory(event: string): string {
  if (/(error|failed|interrupted|cancelled|repaired)/.test(event)) return "error";
  if (event.startsWith("fallback")) return "fallback";
  if (event.startsWith("tool") || event.startsWith("event_")) return "tool";
  if (event.startsWith("turn")) return "turn";
  if (event.includes("retry") || event.includes("estimated")) return "warn";
  return "model";
}

/** A one-line preview of the details: the first few scalar fields. */
function detailsPreview(details: Record<string, unknown>): string {
  return Object.entries(details)
    .filter(([, value]) => value === null || typeof value !== "object")
    .slice(0, 4)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("  ");
}

type TurnFilter = "all" | "session" | number;

export function AuditPanel({ audit }: { audit: AuditRecord[] }) {
  const [filter, setFilter] = useState<TurnFilter>("all");
  const [query, setQuery] = useState("");
  const filterId = useId();
  const queryId = useId();
  const turnIndexes = useMemo(
    () =>
      [
        ...new Set(
          audit.map((entry) => entry.turn_index).filter((value): value is number => value !== null),
        ),
      ].sort((left, right) => left - right),
    [audit],
  );
  const shown = audit.filter((entry) => {
    if (filter === "session" && entry.turn_index !== null) return false;
    if (typeof filter === "number" && entry.turn_index !== filter) return false;
    return query === "" || entry.event.includes(query.trim());
  });

  if (audit.length === 0)
    return <EmptyState>No audit entries yet — run a turn in the Chat tab.</EmptyState>;
  return (
    <div className="audit">
      <div className="toolbar">
        <label htmlFor={filterId}>Turn</label>
        <select
          id={filterId}
          data-testid="audit-turn-filter"
          value={String(filter)}
          onChange={(event) => {
            const value = event.target.value;
            setFilter(value === "all" || value === "session" ? value : Number(value));
          }}
        >
          <option value="all">All turns</option>
          {turnIndexes.map((index) => (
            <option key={index} value={index}>
              Turn {index}
            </option>
          ))}
          <option value="session">Session-level only</option>
        </select>
        <label htmlFor={queryId}>Event</label>
        <input
          id={queryId}
          type="search"
          placeholder="e.g. tool_end"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
        />
        <span className="muted">
          {shown.length} of {audit.length} entries
        </span>
      </div>
      {shown.length === 0 ? (
        <EmptyState>No entries match this filter.</EmptyState>
      ) : (
        <ol className="audit-list">
          {shown.map((entry) => (
            <AuditEntry key={entry.id} entry={entry} />
          ))}
        </ol>
      )}
    </div>
  );
}

function AuditEntry({ entry }: { entry: AuditRecord }) {
  const hasDetails = Object.keys(entry.details).length > 0;
  const where =
    entry.turn_index === null
      ? "session"
      : `T${entry.turn_index}${entry.round_index !== null ? ` · R${entry.round_index}` : ""}`;
  return (
    <li
      className={`audit-entry audit-${auditCategory(entry.event)}`}
      data-testid="audit-entry"
      data-event={entry.event}
    >
      <time className="audit-time" dateTime={entry.created_at} title={entry.created_at}>
        {formatClock(entry.created_at)}
      </time>
      <span className="audit-where">{where}</span>
      <span className="audit-event">{entry.event}</span>
      {hasDetails ? (
        <details className="audit-details">
          <summary>
            <span className="audit-preview">{detailsPreview(entry.details) || "details"}</span>
          </summary>
          <pre className="code">{prettyJson(entry.details)}</pre>
        </details>
      ) : (
        <span className="muted">—</span>
      )}
    </li>
  );
}
