import { type ChangeEvent, useCallback, useRef, useState } from "react";
import { api } from "../api.js";
import type { SessionOverview } from "../api-types.js";
import { NewSessionForm } from "../components/new-session-form.js";
import {
  EmptyState,
  ErrorNotice,
  Loading,
  ModeBadge,
  SimulatedBadge,
} from "../components/status.js";
import { formatDateTime, formatInt } from "../format.js";
import { compareHref, Link, navigate, sessionHref } from "../router.js";
import { useResource } from "../use-resource.js";

const loadSessions = (signal: AbortSignal) =>
  api.listSessions(signal).then((body) => body.sessions);

export function SessionsPage() {
  const resource = useResource("sessions", loadSessions);
  const [selected, setSelected] = useState<string[]>([]);
  const [actionError, setActionError] = useState<{ title: string; error: unknown } | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [importing, setImporting] = useState(false);
  const fileRef = useRef<HTMLInputElement | null>(null);
  const sessions = resource.data ?? [];
  const { reload } = resource;

  const toggle = (id: string, checked: boolean) =>
    setSelected((current) => {
      if (!checked) return current.filter((item) => item !== id);
      // Two at most: picking a third replaces the oldest pick.
      return [...current.filter((item) => item !== id), id].slice(-2);
    });

  const remove = useCallback(
    async (session: SessionOverview) => {
      if (!window.confirm(`Delete the session "${session.title}" and everything it recorded?`))
        return;
      setDeleting(session.id);
      setActionError(null);
      try {
        await api.deleteSession(session.id);
        setSelected((current) => current.filter((item) => item !== session.id));
        await reload();
      } catch (error) {
        setActionError({ title: "Could not delete the session", error });
      } finally {
        setDeleting(null);
      }
    },
    [reload],
  );

  const onImport = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    setImporting(true);
    setActionError(null);
    try {
      const result = await api.importSession(await file.text());
      if (result.session?.id) navigate(sessionHref(result.session.id));
      else await reload();
    } catch (error) {
      setActionError({ title: "Import failed", error });
    } finally {
      setImporting(false);
    }
  };

  const [first, second] = selected;
  return (
    <div className="page sessions-page">
      <div className="page-head">
        <h1>Sessions</h1>
        <div className="page-actions">
          <button
            type="button"
            className="button"
            data-testid="compare-selected"
            disabled={!first || !second}
            onClick={() => navigate(compareHref(first ?? null, second ?? null))}
            title="Tick two sessions to compare them"
          >
            Compare selected ({selected.length}/2)
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
          {resource.error ? (
            <ErrorNotice
              error={resource.error}
              title="Could not load sessions"
              onRetry={() => void reload()}
            />
          ) : null}
          {resource.loading && !resource.data ? <Loading label="Loading sessions…" /> : null}
          {resource.data && sessions.length === 0 ? (
            <EmptyState>
              No sessions yet — create one with the form{" "}
              <span className="hide-narrow">on the right</span>
              <span className="show-narrow">below</span>.
            </EmptyState>
          ) : null}
          {sessions.length > 0 ? (
            <div className="table-scroll">
              <table className="data-table sessions-table">
                <caption className="visually-hidden">Sessions</caption>
                <thead>
                  <tr>
                    <th scope="col">
                      <span className="visually-hidden">Compare</span>
                    </th>
                    <th scope="col">Title</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Models</th>
                    <th scope="col" className="num">
                      Turns
                    </th>
                    <th scope="col" className="num">
                      Tokens
                    </th>
                    <th scope="col">Last update</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {sessions.map((session) => (
                    <tr key={session.id} data-testid="session-row" data-session-id={session.id}>
                      <td>
                        <input
                          type="checkbox"
                          data-testid="compare-checkbox"
                          aria-label={`Compare "${session.title}"`}
                          checked={selected.includes(session.id)}
                          onChange={(event) => toggle(session.id, event.target.checked)}
                        />
                      </td>
                      <td className="title-cell">
                        <Link to={sessionHref(session.id)} data-testid="session-link">
                          {session.title}
                        </Link>
                      </td>
                      <td>
                        <ModeBadge mode={session.tool_invocation_mode} />
                      </td>
                      <td className="models-cell">
                        <code>{session.chat_model}</code>
                        {session.event_model && session.event_model !== session.chat_model ? (
                          <>
                            {" / "}
                            <code>{session.event_model}</code>
                          </>
                        ) : null}{" "}
                        <SimulatedBadge models={[session.chat_model]} />
                      </td>
                      <td className="num">{formatInt(session.turn_count)}</td>
                      <td className="num">{formatInt(session.total_tokens)}</td>
                      <td className="nowrap">
                        <time dateTime={session.updated_at}>
                          {formatDateTime(session.updated_at)}
                        </time>
                      </td>
                      <td>
                        <button
                          type="button"
                          className="button button-small button-quiet-danger"
                          data-testid="delete-session"
                          onClick={() => void remove(session)}
                          disabled={deleting === session.id}
                          aria-label={`Delete "${session.title}"`}
                        >
                          {deleting === session.id ? "Deleting…" : "Delete"}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </section>
        <aside className="sessions-aside">
          <NewSessionForm />
        </aside>
      </div>
    </div>
  );
}
