import { useCallback, useEffect, useId, useMemo, useState } from "react";
import "../daily.css";
import { api } from "../api.js";
import type {
  SessionDetailResponse,
  SessionOverview,
  SessionRecord,
  UsageSummary,
} from "../api-types.js";
import { CompareTranscripts } from "../components/compare-transcripts.js";
import { CostFigure } from "../components/cost-figure.js";
import { DeltaTable } from "../components/delta-table.js";
import { TYPING_PAUSE_MS } from "../components/session-filters.js";
import {
  EmptyState,
  ErrorNotice,
  Loading,
  ModeBadge,
  SimulatedBadge,
} from "../components/status.js";
import { rollupCostLabel } from "../cost.js";
import { agentModels, formatInt, formatMs, formatPercent } from "../format.js";
import { type SessionMetrics, sessionMetrics, turnTimings } from "../metrics.js";
import { compareHref, Link, navigate, sessionHref } from "../router.js";
import { compareSessions } from "../session-compare.js";
import { INCLUDE_EXPERIMENTS } from "../session-list-query.js";
import { loadSessionRecord } from "../session-record.js";
import { buildTranscript, type TranscriptTurn } from "../transcript.js";
import { turnOutcome } from "../turn-outcome.js";
import { useResource } from "../use-resource.js";

interface CompareSide {
  detail: SessionDetailResponse;
  usage: UsageSummary;
  metrics: SessionMetrics;
  transcript: TranscriptTurn[];
  /** True when the session is longer than what was read: the figures cover its beginning. */
  partial: boolean;
}

/** A side's record as the session page reads it: roll-ups, calls, messages and audit (bounded). */
async function loadSide(id: string, signal: AbortSignal): Promise<CompareSide> {
  const record = await loadSessionRecord(id, 1, signal);
  const { detail, usage } = record;
  return {
    detail,
    usage,
    metrics: sessionMetrics(usage, detail.turns),
    transcript: buildTranscript(record.messages, detail.turns, usage.calls, record.audit),
    partial: record.partial,
  };
}

const sideInput = (side: CompareSide) => ({
  mode: side.detail.session.tool_invocation_mode,
  metrics: side.metrics,
  usage: side.usage,
  turns: side.detail.turns,
  transcript: side.transcript,
});

/**
 * The pickers offer the most recently updated sessions whose title has the words searched for
 * (all of them, without a search), plus the ones chosen.
 */
const PICKER_SIZE = 100;

export function ComparePage({ a, b }: { a: string | null; b: string | null }) {
  const searchId = useId();
  const [typed, setTyped] = useState("");
  const [search, setSearch] = useState("");
  useEffect(() => {
    const timer = setTimeout(() => setSearch(typed.trim()), TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  const loadSessions = useCallback(
    (signal: AbortSignal) =>
      api
        // A search finds experiment runs too: comparing two runs is what a search is often for.
        .listSessions(
          { limit: PICKER_SIZE, ...(search ? { q: search, include: INCLUDE_EXPERIMENTS } : {}) },
          signal,
        )
        .then((body) => body.sessions),
    [search],
  );
  const sessions = useResource(`sessions\u0000${search}`, loadSessions);
  const loadA = useCallback((signal: AbortSignal) => loadSide(a ?? "", signal), [a]);
  const loadB = useCallback((signal: AbortSignal) => loadSide(b ?? "", signal), [b]);
  const sideA = useResource(a, loadA);
  const sideB = useResource(b, loadB);
  const rows = useMemo(
    () =>
      sideA.data && sideB.data
        ? compareSessions(sideInput(sideA.data), sideInput(sideB.data))
        : null,
    [sideA.data, sideB.data],
  );

  return (
    <div className="page compare-page">
      <p className="breadcrumb">
        <Link to="/">← Sessions</Link>
      </p>
      <h1>Compare sessions</h1>
      {sessions.error ? (
        <ErrorNotice error={sessions.error} title="Could not load sessions" />
      ) : null}
      <div className="field compare-search">
        <label htmlFor={searchId}>Find sessions by title</label>
        <input
          id={searchId}
          type="search"
          data-testid="compare-search"
          placeholder={`the ${PICKER_SIZE} most recent are offered; type to find others`}
          value={typed}
          onChange={(event) => setTyped(event.target.value)}
        />
      </div>
      <div className="compare-pickers">
        <SessionPicker
          label="Session A"
          value={a}
          chosen={sideA.data?.detail.session ?? null}
          sessions={sessions.data ?? []}
          onChange={(id) => navigate(compareHref(id, b), { replace: true })}
        />
        <SessionPicker
          label="Session B"
          value={b}
          chosen={sideB.data?.detail.session ?? null}
          sessions={sessions.data ?? []}
          onChange={(id) => navigate(compareHref(a, id), { replace: true })}
        />
      </div>
      {!a || !b ? <EmptyState>Pick two sessions to compare.</EmptyState> : null}

      {rows && sideA.data && sideB.data ? (
        <section className="card compare-metrics" aria-labelledby="compare-metrics-heading">
          <h2 id="compare-metrics-heading">Metrics</h2>
          <DeltaTable rows={rows} />
          <p className="legend-note small">
            Outcomes come first: fewer tokens are no gain when the turns or their tools failed.{" "}
            <span className="delta-better">Green</span> is better,{" "}
            <span className="delta-worse">red</span> is worse, and only when the difference is
            larger than the noise: timings both under 5 ms, or from one turn a side, are not told
            apart, and a time, token or cost difference within twice the standard error of the turns
            (turn by turn when both sessions asked the same messages) is marked as within the
            spread, as is a cached share moving less than a percentage point. A row a session's mode
            cannot have is marked n/a. Δ is B − A; % is relative to A. Each session's cost, and
            where it comes from, is shown with it below.
          </p>
        </section>
      ) : null}

      {sideA.data && sideB.data ? (
        <CompareTranscripts a={sideA.data.transcript} b={sideB.data.transcript} />
      ) : null}

      <div className="compare-sides">
        <SideView label="A" id={a} side={sideA} />
        <SideView label="B" id={b} side={sideB} />
      </div>
    </div>
  );
}

/** How a picker names a session: its title, mode and chat model. */
const optionLabel = (session: { title: string; tool_invocation_mode: string }, model: string) =>
  `${session.title} · ${session.tool_invocation_mode} · ${model}`;

function SessionPicker({
  label,
  value,
  chosen,
  sessions,
  onChange,
}: {
  label: string;
  value: string | null;
  /** The chosen session, named as the others are when the sessions offered do not hold it. */
  chosen: SessionRecord | null;
  sessions: SessionOverview[];
  onChange: (id: string | null) => void;
}) {
  const id = useId();
  const known = value === null || sessions.some((session) => session.id === value);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        data-testid={`compare-select-${label.at(-1)?.toLowerCase()}`}
        value={value ?? ""}
        onChange={(event) => onChange(event.target.value || null)}
      >
        <option value="">— choose a session —</option>
        {!known && value ? (
          <option value={value}>
            {chosen === null ? value : optionLabel(chosen, agentModels(chosen.config).chat)}
          </option>
        ) : null}
        {sessions.map((session) => (
          <option key={session.id} value={session.id}>
            {optionLabel(session, session.chat_model)}
          </option>
        ))}
      </select>
    </div>
  );
}

function SideView({
  label,
  id,
  side,
}: {
  label: string;
  id: string | null;
  side: { data: CompareSide | null; error: unknown; loading: boolean; reload: () => Promise<void> };
}) {
  if (!id)
    return (
      <section className="card compare-side compare-side-empty">
        Session {label}: not chosen
      </section>
    );
  if (side.error) {
    return (
      <section className="card compare-side">
        <ErrorNotice
          error={side.error}
          title={`Could not load session ${label}`}
          onRetry={() => void side.reload()}
        />
      </section>
    );
  }
  if (!side.data) {
    return (
      <section className="card compare-side">
        <Loading label={`Loading session ${label}…`} />
      </section>
    );
  }
  const { detail, usage, metrics } = side.data;
  const { session, turns } = detail;
  const { chat: chatModel, event: eventModel } = agentModels(session.config);
  const usesEventAgent = session.tool_invocation_mode !== "chat_agent_tools";
  const timings = turnTimings(usage, turns);
  const rollups = new Map(usage.turns.map((turn) => [turn.turn_index, turn]));
  const records = new Map(turns.map((turn) => [turn.turn_index, turn]));
  const outcomes = new Map(
    side.data.transcript.map((turn) => [turn.turn_index, turnOutcome(turn)] as const),
  );
  return (
    <section
      className="card compare-side"
      aria-label={`Session ${label}`}
      data-testid={`compare-side-${label.toLowerCase()}`}
    >
      <div className="compare-side-head">
        <span className="side-label" aria-hidden="true">
          {label}
        </span>
        <h2>
          <Link to={sessionHref(session.id)}>{session.title}</Link>
        </h2>
      </div>
      <p className="compare-side-facts">
        <ModeBadge mode={session.tool_invocation_mode} /> <code>{chatModel}</code>
        {usesEventAgent ? (
          <>
            {" / "}
            <code>{eventModel}</code>
          </>
        ) : null}{" "}
        <SimulatedBadge models={usesEventAgent ? [chatModel, eventModel] : [chatModel]} />
      </p>
      <dl className="totals">
        <div>
          <dt>Tokens</dt>
          <dd>{formatInt(metrics.total_tokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>
            <CostFigure label={rollupCostLabel(usage.session)} />
          </dd>
        </div>
        <div>
          <dt>Cached</dt>
          <dd>{formatPercent(metrics.cached_share)}</dd>
        </div>
        <div>
          <dt>Calls</dt>
          <dd>{formatInt(metrics.calls)}</dd>
        </div>
        <div>
          <dt>Fallbacks</dt>
          <dd>{usesEventAgent ? formatInt(metrics.fallbacks) : "n/a"}</dd>
        </div>
        <div>
          <dt>Tools</dt>
          <dd>{formatInt(metrics.tools)}</dd>
        </div>
        <div>
          <dt>Wall time</dt>
          <dd>{formatMs(metrics.wall_time_ms)}</dd>
        </div>
        <div>
          <dt>Mean TTFT</dt>
          <dd title={side.data.partial ? "From the turns of the calls read so far" : undefined}>
            {formatMs(metrics.mean_ttft_ms)}
            {side.data.partial ? " (partial)" : null}
          </dd>
        </div>
      </dl>
      {timings.length === 0 ? (
        <EmptyState>No turns yet.</EmptyState>
      ) : (
        <div className="table-scroll">
          <table className="data-table compact-table">
            <caption className="visually-hidden">Turns of session {label}</caption>
            <thead>
              <tr>
                <th scope="col">Turn</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col" className="num">
                  Calls
                </th>
                <th scope="col" className="num">
                  Fall&shy;backs
                </th>
                <th scope="col" className="num">
                  TTFT
                </th>
                <th scope="col" className="num">
                  Wall
                </th>
              </tr>
            </thead>
            <tbody>
              {timings.map((timing) => {
                const rollup = rollups.get(timing.turn_index);
                const record = records.get(timing.turn_index);
                return (
                  <tr key={timing.turn_index}>
                    <th scope="row" title={record?.user_message}>
                      {timing.turn_index}
                    </th>
                    <td className="status-cell" data-testid="compare-turn-status">
                      {outcomes.get(timing.turn_index)?.label ??
                        record?.status.replace("_", " ") ??
                        "—"}
                    </td>
                    <td className="num">{formatInt(rollup?.total_tokens)}</td>
                    <td className="num">
                      {rollup ? <CostFigure label={rollupCostLabel(rollup)} /> : "—"}
                    </td>
                    <td className="num">{formatInt(rollup?.call_count)}</td>
                    <td className="num">
                      {usesEventAgent ? formatInt(rollup?.fallback_count) : "n/a"}
                    </td>
                    <td className="num">{formatMs(timing.ttft_ms)}</td>
                    <td className="num">{formatMs(timing.wall_time_ms)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
