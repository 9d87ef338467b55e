import { useId, useState } from "react";
import { formatMs, prettyJson, prettyJsonText } from "../format.js";
import type { ToolCardData } from "../transcript.js";
import { ApprovalPanel } from "./approval-panel.js";

const STATE_LABELS: Record<ToolCardData["state"], string> = {
  running: "running",
  repairing: "repairing arguments",
  approval: "waiting for approval",
  ok: "ok",
  error: "error",
};

/** One tool call: what was asked, how its arguments were fixed, what came back. Collapsible. */
export function ToolCard({
  card,
  defaultOpen = false,
  sessionId,
}: {
  card: ToolCardData;
  defaultOpen?: boolean;
  /** Set on a live turn: a call waiting for approval shows Approve / Deny. */
  sessionId?: string;
}) {
  const [open, setOpen] = useState(defaultOpen || card.state === "error");
  const pending = card.approval?.state === "pending" && sessionId !== undefined;
  const bodyId = useId();
  const argumentsPreview = card.arguments ? JSON.stringify(card.arguments) : card.raw_arguments;
  return (
    <div
      className={`tool-card tool-card-${card.state}`}
      data-testid="tool-card"
      data-state={card.state}
      data-tool-name={card.name}
    >
      <button
        type="button"
        className="tool-card-header"
        aria-expanded={open}
        aria-controls={bodyId}
        onClick={() => setOpen((value) => !value)}
      >
        <span className="tool-card-chevron" aria-hidden="true">
          {open ? "▾" : "▸"}
        </span>
        <span className="tool-card-name">{card.name}</span>
        <span className="tool-card-preview">{argumentsPreview}</span>
        <span className="tool-card-meta">
          {card.approval && card.approval.state !== "pending" ? (
            <span
              className={`badge ${card.approval.state === "approved" ? "badge-ok" : "badge-warn"}`}
              data-testid="approval-badge"
              title={card.approval.reason ?? undefined}
            >
              {card.approval.state} by {card.approval.decided_by}
            </span>
          ) : null}
          {card.used_fallback ? (
            <span
              className="badge badge-fallback"
              data-testid="fallback-badge"
              title="The event agent wrote or repaired these arguments (argument fallback)"
            >
              fallback
            </span>
          ) : null}
          {card.latency_ms !== null ? (
            <span className="tool-card-latency">{formatMs(card.latency_ms)}</span>
          ) : null}
          <span className={`badge tool-state tool-state-${card.state}`}>
            {card.state === "running" || card.state === "repairing" || card.state === "approval" ? (
              <span className="spinner spinner-small" aria-hidden="true" />
            ) : null}
            {STATE_LABELS[card.state]}
          </span>
        </span>
      </button>
      {pending ? <ApprovalPanel sessionId={sessionId} card={card} /> : null}
      <div id={bodyId} className="tool-card-body" hidden={!open}>
        <section>
          <h4>Arguments</h4>
          <pre className="code">
            {card.arguments ? prettyJson(card.arguments) : "(not valid JSON)"}
          </pre>
        </section>
        <section>
          <h4>Raw arguments</h4>
          <pre className="code code-raw">{card.raw_arguments || "(empty)"}</pre>
        </section>
        {card.fallback || card.requested_raw_arguments !== null ? (
          <section className="tool-card-fallback">
            <h4>Argument fallback{card.fallback ? ` · ${card.fallback.state}` : ""}</h4>
            {card.fallback?.reason ? <p>Refused: {card.fallback.reason}</p> : null}
            {card.requested_raw_arguments !== null ? (
              <>
                <p>The chat agent first wrote:</p>
                <pre className="code code-raw">{card.requested_raw_arguments || "(empty)"}</pre>
              </>
            ) : null}
            {card.fallback?.error ? <p className="text-error">{card.fallback.error}</p> : null}
          </section>
        ) : null}
        <section>
          <h4>Result{card.state === "error" ? " (error)" : ""}</h4>
          {card.result === null ? (
            <p className="muted">
              {card.state === "error" ? "No result: the turn ended first." : "Waiting…"}
            </p>
          ) : (
            <pre className={`code ${card.state === "error" ? "code-error" : ""}`}>
              {prettyJsonText(card.result)}
            </pre>
          )}
        </section>
        <p className="tool-card-id muted">id {card.id}</p>
      </div>
    </div>
  );
}
