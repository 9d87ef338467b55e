import { type ChangeEvent, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api } from "../api.js";
import type { SessionPageItem } from "../api-types.js";
import { LoadMore } from "../components/load-more.js";
import { NewSessionForm } from "../components/new-session-form.js";
import { SelectionBar } from "../components/selection-bar.js";
import { SessionFiltersBar } from "../components/session-filters.js";
import { SessionsTable } from "../components/sessions-table.js";
import { EmptyState, ErrorNotice, Loading } from "../components/status.js";
import { pageOf } from "../paging.js";
import { navigate, sessionHref, useLocation } from "../router.js";
import { importSessionFile } from "../session-import.js";
import {
  filtersFromSearch,
  hasFilters,
  type SessionFilters,
  searchFromFilters,
  withFilter,
} from "../session-list-query.js";
import { type Pick, pickedIds, togglePick } from "../session-selection.js";
import { usePagedList } from "../use-paged-list.js";

/** Rows a page: the first one is on screen at once however many sessions there are. */
export const SESSIONS_PAGE_SIZE = 50;

/** The picks outlive the page: back from a session or the comparison, they are still ticked. */
let rememberedPicks: Pick[] = [];

export function SessionsPage() {
  const { search } = useLocation();
  const filters = useMemo(() => filtersFromSearch(search), [search]);
  const listKey = searchFromFilters(filters);
  const loadPage = useCallback(
    (cursor: string | null, signal: AbortSignal) =>
      api
        .listSessions({ ...filters, limit: SESSIONS_PAGE_SIZE, cursor }, signal)
        .then((body) => pageOf(body, "sessions")),
    [filters],
  );
  const list = usePagedList<SessionPageItem>(`sessions${listKey}`, loadPage);
  const { remove } = list;
  const [picks, setPicks] = useState<Pick[]>(() => rememberedPicks);
  useEffect(() => {
    rememberedPicks = picks;
  }, [picks]);
  const [actionError, setActionError] = useState<{ title: string; error: unknown } | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [importing, setImporting] = useState(false);
  const fileRef = useRef<HTMLInputElement | null>(null);

  const setFilters = useCallback((next: SessionFilters) => {
    navigate(`/${searchFromFilters(next)}`, { replace: true });
  }, []);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;

  // Stable callbacks: every row gets the same functions, so only a row whose props change redraws.
  const onToggle = useCallback((session: SessionPageItem, checked: boolean) => {
    setPicks((current) => togglePick(current, { id: session.id, title: session.title }, checked));
  }, []);
  const onTag = useCallback(
    (tag: string) => setFilters(withFilter(filtersRef.current, "tag", tag)),
    [setFilters],
  );
  const onDelete = useCallback(
    async (session: SessionPageItem) => {
      if (!window.confirm(`Delete the session "${session.title}" and everything it recorded?`)) {
        return;
      }
      setDeleting(session.id);
      setActionError(null);
      try {
        await api.deleteSession(session.id);
        setPicks((current) => togglePick(current, session, false));
        // Dropped in place: reloading would throw away every page read so far.
        remove((item) => item.id === session.id);
      } catch (error) {
        setActionError({ title: "Could not delete the session", error });
      } finally {
        setDeleting(null);
      }
    },
    [remove],
  );

  const onImport = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    setImporting(true);
    setActionError(null);
    try {
      const { session } = await importSessionFile(file);
      navigate(sessionHref(session.id));
    } catch (error) {
      setActionError({ title: "Import failed", error });
    } finally {
      setImporting(false);
    }
  };

  const sessions = list.items;
  const selectedIds = useMemo(() => pickedIds(picks), [picks]);
  const filtered = hasFilters(filters);

  return (
    <div className="page sessions-page">
      <div className="page-head">
        <h1>Sessions</h1>
        <div className="page-actions">
          {/* The list is read when the page opens: sessions made since (a gateway client, the
              CLI, another tab) and turns ended since show once it is read again. */}
          <button
            type="button"
            className="button"
            data-testid="refresh-sessions"
            onClick={list.reload}
            disabled={list.loading}
          >
            Refresh
          </button>
          <button
            type="button"
            className="button"
            onClick={() => fileRef.current?.click()}
            disabled={importing}
          >
            {importing ? "Importing…" : "Import JSON…"}
          </button>
          <input
            ref={fileRef}
            type="file"
            accept="application/json,.json"
            className="visually-hidden"
            tabIndex={-1}
            aria-label="Import a session exported as JSON"
            onChange={(event) => void onImport(event)}
          />
        </div>
      </div>
      {actionError ? <ErrorNotice error={actionError.error} title={actionError.title} /> : null}
      <div className="sessions-layout">
        <section className="sessions-list" aria-label="Sessions">
          <SessionFiltersBar filters={filters} onChange={setFilters} />
          <SelectionBar picks={picks} onClear={() => setPicks([])} />
          {list.error && !list.loaded ? (
            <ErrorNotice error={list.error} title="Could not load sessions" onRetry={list.reload} />
          ) : null}
          {list.loading && !list.loaded ? <Loading label="Loading sessions…" /> : null}
          {list.loaded && !list.stale && sessions.length === 0 ? (
            filtered ? (
              <EmptyState>
                <span data-testid="sessions-empty">No session matches these filters.</span>{" "}
                <button type="button" className="link-button" onClick={() => setFilters({})}>
                  Show every session
                </button>
              </EmptyState>
            ) : (
              <EmptyState>
                <span data-testid="sessions-empty">
                  No sessions yet — create one with the form{" "}
                  <span className="hide-narrow">on the right</span>
                  <span className="show-narrow">below</span>.
                </span>
              </EmptyState>
            )
          ) : null}
          {sessions.length > 0 ? (
            <SessionsTable
              sessions={sessions}
              selectedIds={selectedIds}
              deleting={deleting}
              onToggle={onToggle}
              onDelete={onDelete}
              onTag={onTag}
              busy={list.stale}
            />
          ) : null}
          {list.loaded ? (
            <LoadMore
              list={list}
              pageSize={SESSIONS_PAGE_SIZE}
              what="sessions"
              testId="load-more-sessions"
            >
              <span className="muted small" data-testid="sessions-shown">
                {sessions.length} {sessions.length === 1 ? "session" : "sessions"} shown
                {list.hasMore ? ", more to load" : ""}
              </span>
            </LoadMore>
          ) : null}
        </section>
        <aside className="sessions-aside">
          <NewSessionForm />
        </aside>
      </div>
    </div>
  );
}
