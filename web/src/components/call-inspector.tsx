import { type ReactNode, useCallback, useEffect, useRef } from "react";
import { ApiError, api } from "../api.js";
import type { CallPayloadRecord, UsageCallRecord } from "../api-types.js";
import {
  bodySizeNote,
  type DecodedStream,
  decodeStream,
  describeRequest,
  storageNote,
} from "../call-payload.js";
import { callCostLabel } from "../cost.js";
import { formatInt, prettyJsonText } from "../format.js";
import { KIND_LABELS } from "../metrics.js";
import { useResource } from "../use-resource.js";
import { CostFigure } from "./cost-figure.js";
import { ErrorNotice, Loading } from "./status.js";

/**
 * One model call opened: the exact request body sent and the raw stream received, as the lab
 * captured them. A modal dialog: Esc or Close shuts it and focus returns where it was.
 */
export function CallInspector({
  sessionId,
  call,
  onClose,
}: {
  sessionId: string;
  call: UsageCallRecord;
  onClose: () => void;
}) {
  const dialogRef = useRef<HTMLDialogElement | null>(null);
  const metricKey = call.metric_key ?? "";
  const load = useCallback(
    (signal: AbortSignal) => api.callPayload(sessionId, metricKey, signal),
    [sessionId, metricKey],
  );
  const resource = useResource(`${sessionId}\u0000${metricKey}`, load);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    // No close() here: removing the dialog shuts it without a `close` event, which would
    // otherwise reach onClose after StrictMode's trial unmount and shut the inspector at once.
    return () => opener?.focus?.();
  }, []);

  const agent = call.agent.replace("_", " ");
  return (
    // The native dialog handles Esc (its cancel event closes it) and keeps focus inside.
    <dialog
      ref={dialogRef}
      className="call-inspector"
      data-testid="call-inspector"
      aria-labelledby="call-inspector-title"
      onClose={onClose}
    >
      <div className="call-inspector-body">
        <div className="call-inspector-head">
          <div>
            <h2 id="call-inspector-title">
              Turn {call.turn_index} · round {call.round_index} · {KIND_LABELS[call.call_kind]}
            </h2>
            <p className="muted small" data-testid="call-facts">
              {agent} · <code>{metricKey}</code>
              {call.response_model ? (
                <>
                  {" "}
                  · answered by <code>{call.response_model}</code>
                </>
              ) : null}
              {call.finish_reason ? ` · finish ${call.finish_reason}` : ""} ·{" "}
              {formatInt(call.total_tokens)} tokens
              {call.usage_source === "estimated" ? " (estimated)" : ""} ·{" "}
              <CostFigure label={callCostLabel(call)} testId="call-inspector-cost" />
            </p>
          </div>
          <button
            type="button"
            className="button button-small"
            data-testid="call-inspector-close"
            onClick={() => dialogRef.current?.close()}
          >
            Close
          </button>
        </div>
        {resource.data ? <PayloadView payload={resource.data} /> : null}
        {resource.loading && !resource.data ? <Loading label="Loading the call…" /> : null}
        {resource.error ? <PayloadError error={resource.error} /> : null}
      </div>
    </dialog>
  );
}

function PayloadError({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.status === 404 && error.code === "call_not_captured") {
    return (
      <div className="notice notice-warn" data-testid="call-not-captured">
        <p>
          <strong>Nothing was captured for this call.</strong> {error.message}
        </p>
        <p className="small">
          The lab keeps each call's request and raw stream when the session's capture setting allows
          it: by default (<code>capture.payloads: "auto"</code>) for the simulated model and
          endpoints on this machine. To keep them for any endpoint, create the session with{" "}
          <code>{'"capture": { "payloads": "on" }'}</code> in its config. Calls recorded without a
          payload (capture off, an older database, an imported session) stay without one.
        </p>
      </div>
    );
  }
  return <ErrorNotice error={error} title="Could not load the call" />;
}

function PayloadView({ payload }: { payload: CallPayloadRecord }) {
  const digest = payload.request_truncated ? null : describeRequest(payload.request_body);
  const decoded = decodeStream(payload.response_body);
  const request = bodySizeNote(
    payload.request_body,
    payload.request_bytes,
    payload.request_truncated,
  );
  const response = bodySizeNote(
    payload.response_body,
    payload.response_bytes,
    payload.response_truncated,
  );
  return (
    <>
      <p className="muted small" data-testid="call-storage">
        {storageNote(payload)}
      </p>
      <section aria-labelledby="call-request-heading" data-testid="call-request">
        <BodyHeading id="call-request-heading" size={request} testId="call-request-size">
          Request body
        </BodyHeading>
        {digest ? (
          <>
            <dl className="payload-facts">
              <div>
                <dt>Model</dt>
                <dd>
                  <code>{digest.model ?? "—"}</code>
                </dd>
              </div>
              <div>
                <dt>Messages</dt>
                <dd>{formatInt(digest.messages.length)}</dd>
              </div>
              <div>
                <dt>Tools</dt>
                <dd>{digest.tools.length === 0 ? "none" : digest.tools.join(", ")}</dd>
              </div>
              {Object.entries(digest.parameters).map(([key, value]) => (
                <div key={key}>
                  <dt>{key}</dt>
                  <dd>
                    <code>{typeof value === "string" ? value : JSON.stringify(value)}</code>
                  </dd>
                </div>
              ))}
            </dl>
            {digest.messages.length > 0 ? (
              <ol className="payload-messages" aria-label="Messages sent">
                {digest.messages.map((message, index) => (
                  // The request is fixed once captured: a message's position is its identity.
                  // biome-ignore lint/suspicious/noArrayIndexKey: immutable list
                  <li key={index} className="payload-message">
                    <span className="payload-role">{message.role}</span>
                    <span className="payload-text">
                      {message.text}
                      {message.tool_calls.length > 0 ? (
                        <span className="muted"> → {message.tool_calls.join(", ")}</span>
                      ) : null}
                    </span>
                  </li>
                ))}
              </ol>
            ) : null}
          </>
        ) : null}
        <details open={!digest}>
          <summary className="small">Request JSON</summary>
          <ScrollablePre
            className={`payload-pre ${digest ? "" : "payload-pre-text"}`}
            testId="call-request-body"
          >
            {digest ? prettyJsonText(payload.request_body) : payload.request_body}
          </ScrollablePre>
        </details>
      </section>
      {decoded ? <DecodedView decoded={decoded} cut={payload.response_truncated} /> : null}
      <section aria-labelledby="call-response-heading" data-testid="call-response">
        <BodyHeading id="call-response-heading" size={response} testId="call-response-size">
          Raw stream
        </BodyHeading>
        <ScrollablePre className="payload-pre" testId="call-response-body">
          {payload.response_body === "" ? "(nothing received)" : payload.response_body}
        </ScrollablePre>
      </section>
    </>
  );
}

/** The stream's deltas joined: what the model wrote, tags the raw chunks split made whole. */
function DecodedView({ decoded, cut }: { decoded: DecodedStream; cut: boolean }) {
  return (
    <section aria-labelledby="call-decoded-heading" data-testid="call-decoded">
      <h3 id="call-decoded-heading">
        Streamed text
        <span className="size-note">
          deltas of {formatInt(decoded.events)} events joined{cut ? ", up to the cut" : ""}
        </span>
      </h3>
      {decoded.reasoning !== "" ? (
        <details className="reasoning">
          <summary className="reasoning-summary">
            Thinking · {formatInt(decoded.reasoning.length)} chars
          </summary>
          <div className="reasoning-text">{decoded.reasoning}</div>
        </details>
      ) : null}
      {decoded.refusal !== "" ? (
        <p className="message message-refusal small">Refusal: {decoded.refusal}</p>
      ) : null}
      <ScrollablePre className="payload-pre payload-pre-text" testId="call-decoded-text">
        {decoded.content === "" ? "(no text)" : decoded.content}
      </ScrollablePre>
      {decoded.tool_calls.length > 0 ? (
        <ul className="payload-tool-calls small" data-testid="call-decoded-tools">
          {decoded.tool_calls.map((call, index) => (
            // Tool calls are placed by their stream index: the position is the identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: index is the stream's own key
            <li key={index}>
              <code>{call.name || "?"}</code> <code>{call.arguments}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** A scrolling block of text that keyboard users can reach and scroll. */
function ScrollablePre(props: { className: string; testId: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <pre className={props.className} tabIndex={0} data-testid={props.testId}>
      {props.children}
    </pre>
  );
}

/** A body's heading with its size note, marked when the body was cut at the cap. */
function BodyHeading(props: {
  id: string;
  size: { text: string; cut: boolean };
  testId: string;
  children: ReactNode;
}) {
  return (
    <h3 id={props.id}>
      {props.children}
      <span
        className={`size-note ${props.size.cut ? "size-note-cut" : ""}`}
        data-testid={props.testId}
      >
        {props.size.text}
      </span>
    </h3>
  );
}
