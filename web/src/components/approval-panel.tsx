import { useId, useState } from "react";
import { api, errorMessage } from "../api.js";
import { prettyJson } from "../format.js";
import { parseJsonInput } from "../json-input.js";
import type { ToolCardData } from "../transcript.js";

/**
 * A call waiting for approval: its arguments as editable JSON, Approve and Deny. The turn goes on
 * when its stream reports the decision (`approval_decided`); this panel only sends the answer.
 */
export function ApprovalPanel({ sessionId, card }: { sessionId: string; card: ToolCardData }) {
  const original = prettyJson(card.arguments ?? {});
  const [text, setText] = useState(original);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const editorId = useId();
  const reasonId = useId();

  async function decide(decision: "approve" | "deny") {
    setError(null);
    let edited: Record<string, unknown> | undefined;
    if (decision === "approve" && text !== original) {
      const parsed = parseJsonInput(text, "object");
      if ("error" in parsed) {
        setError(`Arguments: ${parsed.error}`);
        return;
      }
      edited = parsed.value as Record<string, unknown>;
    }
    setBusy(true);
    try {
      await api.decideApproval(sessionId, card.id, {
        decision,
        ...(edited ? { arguments: edited } : {}),
        ...(decision === "deny" && reason.trim() ? { reason: reason.trim() } : {}),
      });
    } catch (requestError) {
      setError(errorMessage(requestError));
      setBusy(false);
    }
  }

  return (
    <section className="approval-panel" data-testid="approval-panel" aria-label="Approval">
      <p className="approval-question">
        <strong>{card.name}</strong> requires your approval before it runs.
      </p>
      <label htmlFor={editorId}>Arguments (JSON, editable)</label>
      <textarea
        id={editorId}
        className="code approval-arguments"
        data-testid="approval-arguments"
        spellCheck={false}
        rows={Math.min(12, text.split("\n").length + 1)}
        value={text}
        disabled={busy}
        onChange={(event) => {
          setText(event.target.value);
          setError(null);
        }}
      />
      <label htmlFor={reasonId}>Reason (sent to the model when you deny)</label>
      <input
        id={reasonId}
        className="approval-reason"
        data-testid="approval-reason"
        value={reason}
        disabled={busy}
        onChange={(event) => setReason(event.target.value)}
      />
      {error ? (
        <p className="text-error" role="alert" data-testid="approval-error">
          {error}
        </p>
      ) : null}
      <div className="approval-actions">
        <button
          type="button"
          className="button button-primary"
          data-testid="approve-button"
          disabled={busy}
          onClick={() => void decide("approve")}
        >
          Approve
        </button>
        <button
          type="button"
          className="button button-danger"
          data-testid="deny-button"
          disabled={busy}
          onClick={() => void decide("deny")}
        >
          Deny
        </button>
      </div>
    </section>
  );
}
