import { type KeyboardEvent, useCallback, useMemo, useRef, useState } from "react";
import { api, errorMessage } from "../api.js";
import { AuditPanel } from "../components/audit-panel.js";
import { ChatPanel, type LiveProgress } from "../components/chat-panel.js";
import { CostFigure } from "../components/cost-figure.js";
import { ReplayPanel } from "../components/replay-panel.js";
import { SessionSetup } from "../components/session-setup.js";
import {
  EmptyState,
  ErrorNotice,
  GatewayBadge,
  Loading,
  ModeBadge,
  SimulatedBadge,
} from "../components/status.js";
import { EstimatedMark } from "../components/usage-cells.js";
import { UsagePanel } from "../components/usage-panel.js";
import { rollupCostLabel } from "../cost.js";
import { agentModels, formatDateTime, formatInt } from "../format.js";
import { gatewayDescription, gatewayMarkOf, isGatewayConfig } from "../gateway-mark.js";
import { compareHref, Link, sessionHref } from "../router.js";
import { CALLS_BOUND, loadSessionRecord, RECORD_BOUND } from "../session-record.js";
import { buildTranscript } from "../transcript.js";
import { useResource } from "../use-resource.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** After Stop, the server needs a moment to store the cancelled turn; wait for it (at most ~5 s). */
async function waitForStoredEnd(id: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const { turns } = await api.getSession(id);
      if (turns.at(-1)?.status !== "running") return;
    } catch {
      return;
    }
    await sleep(250);
  }
}

type Tab = "chat" | "usage" | "audit";
const TABS: { id: Tab; label: string }[] = [
  { id: "chat", label: "Chat" },
  { id: "usage", label: "Usage" },
  { id: "audit", label: "Audit timeline" },
];

export function SessionPage({ id }: { id: string }) {
  // How many rows of each list to read; "Read further" raises it and reloads in place.
  const readsRef = useRef(1);
  const load = useCallback(
    (signal: AbortSignal) => loadSessionRecord(id, readsRef.current, signal),
    [id],
  );
  const resource = useResource(id, load);
  const [tab, setTab] = useState<Tab>("chat");
  const [liveProgress, setLiveProgress] = useState<LiveProgress | null>(null);
  const [replaying, setReplaying] = useState(false);
  const { data, reload } = resource;

  const transcript = useMemo(
    () =>
      data ? buildTranscript(data.messages, data.detail.turns, data.usage.calls, data.audit) : [],
    [data],
  );

  const onTurnFinished = useCallback(
    async (afterStop: boolean) => {
      if (afterStop) await waitForStoredEnd(id);
      await reload();
    },
    [id, reload],
  );

  if (!data) {
    if (resource.error) {
      return (
        <div className="page">
          <p>
            <Link to="/">← Sessions</Link>
          </p>
          <ErrorNotice
            error={resource.error}
            title="Could not load the session"
            onRetry={() => void reload()}
          />
        </div>
      );
    }
    return (
      <div className="page">
        <Loading label="Loading session…" />
      </div>
    );
  }

  const { session, turns } = data.detail;
  const { chat: chatModel, event: eventModel } = agentModels(session.config);
  // chat_agent_tools runs no event agent: its model is configuration it never uses.
  const usesEventAgent = session.tool_invocation_mode !== "chat_agent_tools";
  const usedModels = usesEventAgent ? [chatModel, eventModel] : [chatModel];
  // While a turn streams, the header counts it (and its tokens so far) before it is stored.
  const liveCounted =
    liveProgress !== null &&
    !turns.some((turn) => turn.turn_index === liveProgress.turn_index) &&
    !data.usage.turns.some((turn) => turn.turn_index === liveProgress.turn_index);
  const turnCount = liveCounted ? turns.length + 1 : turns.length;
  const tokenCount = data.usage.session.total_tokens + (liveCounted ? liveProgress.tokens : 0);
  const gatewayMark = gatewayMarkOf(session.config);
  const gateway = isGatewayConfig(session.config);
  const requestedModel = (agent: string) => (agent === "chat_agent" ? chatModel : eventModel);
  const onTabKey = (event: KeyboardEvent<HTMLButtonElement>) => {
    const index = TABS.findIndex((item) => item.id === tab);
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (step === 0) return;
    event.preventDefault();
    const next = TABS[(index + step + TABS.length) % TABS.length];
    if (next) {
      setTab(next.id);
      document.getElementById(`tab-${next.id}`)?.focus();
    }
  };

  return (
    <div className="page session-page">
      <p className="breadcrumb">
        <Link to="/">← Sessions</Link>
      </p>
      <header className="session-header">
        <div className="session-title-row">
          <h1>{session.title}</h1>
          {gateway ? <GatewayBadge mark={gatewayMark} /> : null}
          <SimulatedBadge models={usedModels} />
        </div>
        <DerivedFrom sessionId={session.id} config={session.config} />
        {gateway ? (
          <p className="session-subtitle muted" data-testid="gateway-subtitle">
            {gatewayDescription(gatewayMark)}
          </p>
        ) : null}
        <dl className="session-facts">
          <div>
            <dt>Mode</dt>
            <dd>
              <ModeBadge mode={session.tool_invocation_mode} />
            </dd>
          </div>
          <div>
            <dt>Chat model</dt>
            <dd>
              <code>{chatModel}</code>
            </dd>
          </div>
          {usesEventAgent ? (
            <div>
              <dt>Event model</dt>
              <dd data-testid="session-event-model">
                <code>{eventModel}</code>
              </dd>
            </div>
          ) : null}
          <div>
            <dt>Turns</dt>
            <dd data-testid="session-turns" data-live={liveCounted ? "true" : undefined}>
              {turnCount}
            </dd>
          </div>
          <div>
            <dt>Tokens</dt>
            <dd data-testid="session-tokens" data-live={liveCounted ? "true" : undefined}>
              {formatInt(tokenCount)}
              <EstimatedMark rollup={data.usage.session} testId="session-tokens-estimated" />
            </dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd>
              <CostFigure label={rollupCostLabel(data.usage.session)} testId="session-cost" />
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatDateTime(session.created_at)}</dd>
          </div>
        </dl>
        <div className="session-actions">
          <button
            type="button"
            className="button button-small"
            onClick={() => void downloadExport(session.id)}
          >
            Export JSON
          </button>
          <button
            type="button"
            className="button button-small"
            data-testid="replay-button"
            disabled={turns.length === 0 || replaying}
            title="Run this session's messages again under other settings, then compare"
            onClick={() => setReplaying(true)}
          >
            Replay…
          </button>
          <button
            type="button"
            className="button button-small"
            onClick={() => void reload()}
            disabled={resource.loading}
          >
            {resource.loading ? "Refreshing…" : "Refresh"}
          </button>
        </div>
        {replaying ? (
          <ReplayPanel
            sessionId={session.id}
            config={session.config}
            onClose={() => setReplaying(false)}
          />
        ) : null}
        <SessionSetup config={session.config} audit={data.audit} />
        {resource.error ? <ErrorNotice error={resource.error} title="Refresh failed" /> : null}
        {data.partial ? (
          <div className="notice notice-warn" data-testid="record-partial">
            This session is long: the chat shows its beginning (up to{" "}
            {formatInt(readsRef.current * RECORD_BOUND)} messages and audit entries, and{" "}
            {formatInt(readsRef.current * CALLS_BOUND)} calls for the timings); the totals above
            count everything.{" "}
            <button
              type="button"
              className="button button-small"
              disabled={resource.loading}
              onClick={() => {
                readsRef.current += 1;
                void reload();
              }}
            >
              {resource.loading ? "Reading…" : "Read further"}
            </button>
          </div>
        ) : null}
      </header>

      <div className="tabs" role="tablist" aria-label="Session views">
        {TABS.map((item) => (
          <button
            key={item.id}
            type="button"
            role="tab"
            id={`tab-${item.id}`}
            data-testid={`tab-${item.id}`}
            aria-selected={tab === item.id}
            aria-controls={`panel-${item.id}`}
            tabIndex={tab === item.id ? 0 : -1}
            className="tab"
            onClick={() => setTab(item.id)}
            onKeyDown={onTabKey}
          >
            {item.label}
            {item.id === "audit" ? <span className="tab-count">{data.audit.length}</span> : null}
          </button>
        ))}
      </div>

      {/* The chat stays mounted (hidden) so a running turn keeps streaming while other tabs show. */}
      <section id="panel-chat" role="tabpanel" aria-labelledby="tab-chat" hidden={tab !== "chat"}>
        <ChatPanel
          sessionId={session.id}
          config={session.config}
          transcript={transcript}
          turnUsage={data.usage.turns}
          runningElsewhere={turns.at(-1)?.status === "running"}
          onTurnFinished={onTurnFinished}
          onLiveProgress={setLiveProgress}
        />
      </section>
      {tab === "usage" ? (
        <section id="panel-usage" role="tabpanel" aria-labelledby="tab-usage">
          {data.usage.session.call_count === 0 && data.usage.turns.length === 0 ? (
            <EmptyState>No usage recorded yet — run a turn in the Chat tab.</EmptyState>
          ) : (
            <UsagePanel
              sessionId={session.id}
              usage={data.usage}
              turns={turns}
              callsPartial={data.calls_partial}
              requestedModel={requestedModel}
            />
          )}
        </section>
      ) : null}
      {tab === "audit" ? (
        <section id="panel-audit" role="tabpanel" aria-labelledby="tab-audit">
          <AuditPanel audit={data.audit} />
        </section>
      ) : null}
    </div>
  );
}

/** Fetched (not a plain link) so the request carries the access token when the lab has one. */
async function downloadExport(sessionId: string): Promise<void> {
  try {
    const document = await api.exportSession(sessionId);
    const url = URL.createObjectURL(
      new Blob([JSON.stringify(document, null, 2)], { type: "application/json" }),
    );
    const link = Object.assign(window.document.createElement("a"), {
      href: url,
      download: `${sessionId}.json`,
    });
    link.click();
    URL.revokeObjectURL(url);
  } catch (error) {
    window.alert(`Export failed: ${errorMessage(error)}`);
  }
}

/** A fork's or a replay's source, with a link to compare the two. */
function DerivedFrom({
  sessionId,
  config,
}: {
  sessionId: string;
  config: Record<string, unknown>;
}) {
  const derived = config.derived_from as
    | { kind?: unknown; session_id?: unknown; turn_index?: unknown }
    | undefined;
  if (!derived || typeof derived.session_id !== "string") return null;
  const source = derived.session_id;
  return (
    <p className="session-subtitle muted" data-testid="derived-from">
      {derived.kind === "replay" ? "Replay of " : "Forked from "}
      <Link to={sessionHref(source)}>
        <code>{source}</code>
      </Link>
      {derived.kind === "fork" && typeof derived.turn_index === "number"
        ? ` after turn ${derived.turn_index}`
        : ""}
      {" · "}
      <Link to={compareHref(source, sessionId)} data-testid="compare-with-source">
        Compare with it
      </Link>
    </p>
  );
}
