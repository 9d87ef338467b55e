import { useCallback } from "react";
import type { AgentRole, UsageCallRecord } from "../api-types.js";
import { callCostLabel } from "../cost.js";
import { formatInt, formatMs } from "../format.js";
import { KIND_LABELS, servedModel } from "../metrics.js";
import { readCalls } from "../session-record.js";
import { usePagedList } from "../use-paged-list.js";
import { CostFigure } from "./cost-figure.js";
import { LoadMore } from "./load-more.js";
import { ErrorNotice, Loading } from "./status.js";
import { TokenCostHeaders } from "./usage-cells.js";

/** Calls a page of the calls table; a session of a million calls is read on demand. */
export const CALLS_PAGE_SIZE = 100;

/**
 * The session's calls a page at a time (`/usage/calls`, recording order), with "Load more".
 * `version` changes when the session recorded more calls, which reads the first page again.
 */
export function PagedCallsTable({
  sessionId,
  callCount,
  requestedModel,
  onInspect,
}: {
  sessionId: string;
  /** The session's call count (its roll-up): the list is read again when it changes. */
  callCount: number;
  requestedModel: (agent: AgentRole) => string | null;
  onInspect: (call: UsageCallRecord) => void;
}) {
  const read = useCallback(
    (cursor: string | null, signal: AbortSignal) =>
      readCalls(sessionId, CALLS_PAGE_SIZE)(cursor, signal),
    [sessionId],
  );
  const list = usePagedList(`${sessionId}\u0000${callCount}`, read);
  if (list.error && !list.loaded) {
    return (
      <ErrorNotice error={list.error} title="Could not load the calls" onRetry={list.reload} />
    );
  }
  if (!list.loaded) return <Loading label="Loading calls…" />;
  return (
    <>
      <CallsTable calls={list.items} requestedModel={requestedModel} onInspect={onInspect} />
      <LoadMore list={list} pageSize={CALLS_PAGE_SIZE} what="calls" testId="load-more-calls">
        <span className="muted small" data-testid="calls-shown">
          {formatInt(list.items.length)} of {formatInt(callCount)} calls shown
        </span>
      </LoadMore>
    </>
  );
}

const USAGE_SOURCE_TITLES: Record<string, string> = {
  estimated:
    "Counted with the lab's tokenizer: the endpoint reported no usage, or the call was cut short (cancelled, failed mid-stream) before its usage arrived.",
  provider_timings: "From the server's timing report (llama.cpp `timings`), not a usage object.",
};

/** A model call can be opened when it has a key to find its capture by; tool runs have none. */
export const isInspectable = (call: UsageCallRecord): boolean =>
  call.call_kind !== "tool_execution" && call.metric_key !== null;

/**
 * Every measured call of the session, one row each: tokens with reasoning and cache writes, cost
 * and its source, the model that answered when it is not the one asked for. A model call opens
 * in the call inspector (its name is a button; a click anywhere on the row does the same).
 */
export function CallsTable({
  calls,
  requestedModel,
  onInspect,
}: {
  calls: UsageCallRecord[];
  requestedModel: (agent: AgentRole) => string | null;
  onInspect: (call: UsageCallRecord) => void;
}) {
  const sorted = [...calls].sort(
    (left, right) =>
      left.turn_index - right.turn_index ||
      left.round_index - right.round_index ||
      left.id - right.id,
  );
  return (
    <div className="table-scroll">
      <table className="data-table compact-table calls-table" data-testid="calls-table">
        <caption className="visually-hidden">Usage per call</caption>
        <thead>
          <tr>
            <th scope="col">Turn</th>
            <th scope="col">Call</th>
            <th scope="col">Model</th>
            <TokenCostHeaders />
            <th scope="col" className="num">
              TTFT
            </th>
            <th scope="col" className="num">
              Elapsed
            </th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((call) => (
            <CallRow
              key={call.id}
              call={call}
              requested={requestedModel(call.agent)}
              onInspect={onInspect}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CallRow({
  call,
  requested,
  onInspect,
}: {
  call: UsageCallRecord;
  requested: string | null;
  onInspect: (call: UsageCallRecord) => void;
}) {
  const inspectable = isInspectable(call);
  const served = servedModel(call, requested);
  const sourceTitle = USAGE_SOURCE_TITLES[call.usage_source];
  const what =
    call.call_kind === "chat_completion"
      ? call.agent.replace("_", " ")
      : `${KIND_LABELS[call.call_kind]}${call.event_name ? ` ${call.event_name}` : ""}`;
  const label = `R${call.round_index} · ${what}`;
  return (
    <tr
      data-testid="call-row"
      data-metric-key={call.metric_key ?? ""}
      data-call-kind={call.call_kind}
      data-usage-source={call.usage_source}
      className={inspectable ? "call-inspectable" : undefined}
      // A click anywhere on the row opens it too; the keyboard uses the call's button.
      onClick={inspectable ? () => onInspect(call) : undefined}
    >
      <td>{call.turn_index}</td>
      <td>
        {inspectable ? (
          <button
            type="button"
            className="link-button"
            data-testid="inspect-call"
            title="Open this call: the request sent and the raw stream received"
            onClick={(event) => {
              event.stopPropagation();
              onInspect(call);
            }}
          >
            {label}
          </button>
        ) : (
          label
        )}
        {call.refusal ? <span className="badge badge-warn">refused</span> : null}
      </td>
      <td>
        {call.call_kind === "tool_execution" ? (
          <span className="muted">—</span>
        ) : (
          <code>{requested ?? "—"}</code>
        )}
        {served ? (
          <span
            className="served-model"
            data-testid="served-model"
            title={`Asked for ${requested ?? "?"}; the endpoint answered as ${served}`}
          >
            served: {served}
          </span>
        ) : null}
      </td>
      <td className="num">{formatInt(call.prompt_tokens)}</td>
      <td className="num">{formatInt(call.cached_tokens)}</td>
      <td className="num">{formatInt(call.completion_tokens)}</td>
      <td className="num strong">
        {formatInt(call.total_tokens)}
        {sourceTitle ? (
          <span
            className="muted small estimated-mark"
            title={sourceTitle}
            data-testid="call-usage-source"
          >
            {" "}
            {call.usage_source === "estimated" ? "estimated" : "timings"}
          </span>
        ) : null}
      </td>
      <td className="num">{formatInt(call.reasoning_tokens)}</td>
      <td className="num">{formatInt(call.cache_write_tokens)}</td>
      <td className="num">
        <CostFigure label={callCostLabel(call)} testId="call-cost" />
      </td>
      <td className="num">{formatMs(call.ttft_ms)}</td>
      <td className="num">{formatMs(call.elapsed_ms)}</td>
    </tr>
  );
}
