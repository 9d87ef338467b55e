import { type FormEvent, useState } from "react";
import { configOverrides, NO_CHANGES } from "../config-overrides.js";
import { forkSession } from "../derived-api.js";
import { navigate, sessionHref } from "../router.js";
import { ConfigChangeFields } from "./config-change-fields.js";
import { ErrorNotice } from "./status.js";

/** Forks the session after a turn into a new session, with optional config changes. */
export function ForkPanel({
  sessionId,
  config,
  turnIndex,
  onClose,
}: {
  sessionId: string;
  config: Record<string, unknown>;
  turnIndex: number;
  onClose: () => void;
}) {
  const [title, setTitle] = useState("");
  const [changes, setChanges] = useState(NO_CHANGES);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const overrides = configOverrides(config, changes);
      const { session } = await forkSession(sessionId, {
        turn_index: turnIndex,
        ...(title.trim() ? { title: title.trim() } : {}),
        ...(overrides ? { config: overrides } : {}),
      });
      navigate(sessionHref(session.id));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <form
      className="card derive-panel"
      data-testid="fork-panel"
      onSubmit={(event) => void onSubmit(event)}
    >
      <h3>Fork after turn {turnIndex}</h3>
      <p className="muted small">
        A new session with this conversation up to turn {turnIndex}; the next message goes to it.
        This session stays as it is.
      </p>
      <ConfigChangeFields
        source={config}
        title={title}
        onTitle={setTitle}
        changes={changes}
        onChange={setChanges}
        testIdPrefix="fork"
      />
      {error ? <ErrorNotice error={error} title="Could not fork" /> : null}
      <div className="derive-actions">
        <button
          type="submit"
          className="button button-primary"
          data-testid="fork-submit"
          disabled={busy}
        >
          {busy ? "Forking…" : "Fork"}
        </button>
        <button type="button" className="button" onClick={onClose} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}
