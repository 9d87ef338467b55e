import { type ReactNode, useEffect, useRef } from "react";
import { errorMessage } from "../api.js";
import { isSimulatedModel, modeLabel } from "../format.js";
import { type GatewayMark, gatewayDescription } from "../gateway-mark.js";
import type { TurnOutcome } from "../turn-outcome.js";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function ErrorNotice({
  error,
  title = "Something went wrong",
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  // An error below the fold looks like nothing happened: bring it into view when it appears.
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.scrollIntoView?.({ block: "nearest" });
  }, []);
  return (
    <div className="notice notice-error" role="alert" ref={ref}>
      <strong>{title}:</strong> {errorMessage(error)}
      {onRetry ? (
        <button type="button" className="button button-small" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function EmptyState({ children }: { children: ReactNode }) {
  return <div className="empty-state">{children}</div>;
}

export function SimulatedBadge({ models }: { models: (string | null | undefined)[] }) {
  const simulated = models.filter(isSimulatedModel);
  if (simulated.length === 0) return null;
  // models[0] is the chat agent: a real chat agent with a simulated helper is labelled as such.
  const label = isSimulatedModel(models[0]) ? "simulated" : "simulated event agent";
  return (
    <span
      className="badge badge-simulated"
      data-testid="simulated-badge"
      title={`Simulated model (${simulated.join(", ")}): deterministic, no network; numbers are not a real endpoint's`}
    >
      {label}
    </span>
  );
}

/** A session recorded through the gateway (`/v1`); the tooltip says where its requests went. */
export function GatewayBadge({ mark }: { mark: GatewayMark | null }) {
  return (
    <span
      className="badge badge-gateway"
      data-testid="gateway-badge"
      title={gatewayDescription(mark)}
    >
      gateway
    </span>
  );
}

export function ModeBadge({ mode }: { mode: string }) {
  return <span className={`badge badge-mode badge-mode-${mode}`}>{modeLabel(mode)}</span>;
}

const STATUS_CLASS: Record<string, string> = {
  running: "badge-running",
  completed: "badge-ok",
  cancelled: "badge-warn",
  max_rounds: "badge-warn",
  failed: "badge-error",
  interrupted: "badge-error",
};

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge ${STATUS_CLASS[status] ?? ""}`}>{status.replace("_", " ")}</span>;
}

const TONE_CLASS: Record<TurnOutcome["tone"], string> = {
  running: "badge-running",
  ok: "badge-ok",
  warn: "badge-warn",
  error: "badge-error",
};

/** A turn's status as what it achieved: "completed" is green only when its tools worked. */
export function OutcomeBadge({ outcome }: { outcome: TurnOutcome }) {
  return (
    <span
      className={`badge ${TONE_CLASS[outcome.tone]}`}
      data-testid="turn-outcome"
      data-tone={outcome.tone}
    >
      {outcome.label}
    </span>
  );
}
