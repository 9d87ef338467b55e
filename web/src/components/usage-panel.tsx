import { useMemo, useState } from "react";
import type {
  AgentRole,
  TurnRecord,
  UsageCallRecord,
  UsageRollup,
  UsageSummary,
} from "../api-types.js";
import { TimingChart } from "../charts/timing-chart.js";
import { TokensChart } from "../charts/tokens-chart.js";
import { WaterfallChart } from "../charts/waterfall-chart.js";
import { rollupCostLabel } from "../cost.js";
import { formatInt, formatMs } from "../format.js";
import { lastTurnWithCallsRead, turnTimings, waterfallLayout } from "../metrics.js";
import { CallInspector } from "./call-inspector.js";
import { PagedCallsTable } from "./calls-table.js";
import { CostFigure } from "./cost-figure.js";
import { EstimatedMark, TokenCostHeaders } from "./usage-cells.js";

/** Turns drawn in the table and charts unless asked for all (a long session has thousands). */
export const TURN_WINDOW = 200;

/**
 * The usage tab: per-turn numbers with cost (the API's roll-ups), the calls a page at a time (each
 * model call can be opened in the call inspector), tokens and timing charts, and one turn's call
 * waterfall (from the calls the session page read).
 */
export function UsagePanel({
  sessionId,
  usage,
  turns,
  callsPartial = false,
  requestedModel,
}: {
  sessionId: string;
  usage: UsageSummary;
  turns: TurnRecord[];
  /** The session page read only the first calls: later turns' TTFT is not known here. */
  callsPartial?: boolean;
  /** The model string the session's config asks of an agent. */
  requestedModel: (agent: AgentRole) => string | null;
}) {
  const [inspected, setInspected] = useState<UsageCallRecord | null>(null);
  const [everyTurn, setEveryTurn] = useState(false);
  const allTimings = useMemo(() => turnTimings(usage, turns), [usage, turns]);
  // A session of thousands of turns draws its latest ones unless asked for all.
  const timings = everyTurn ? allTimings : allTimings.slice(-TURN_WINDOW);
  const rollups = useMemo(
    () => new Map(usage.turns.map((turn) => [turn.turn_index, turn])),
    [usage.turns],
  );
  const statuses = useMemo(
    () => new Map(turns.map((turn) => [turn.turn_index, turn.status])),
    [turns],
  );
  const shownRollups = useMemo(
    () => (everyTurn ? usage.turns : usage.turns.slice(-TURN_WINDOW)),
    [usage.turns, everyTurn],
  );
  const lastReadTurn = lastTurnWithCallsRead(usage.calls, callsPartial);
  const turnIndexes = timings.map((timing) => timing.turn_index);
  const [selected, setSelected] = useState<number | null>(null);
  const waterfallTurn =
    selected !== null && turnIndexes.includes(selected) ? selected : (turnIndexes.at(-1) ?? 1);
  const layout = useMemo(
    () => waterfallLayout(usage.calls, waterfallTurn),
    [usage.calls, waterfallTurn],
  );

  return (
    <div className="usage">
      {allTimings.length > TURN_WINDOW ? (
        <p className="muted small" data-testid="turn-window">
          {everyTurn
            ? `All ${formatInt(allTimings.length)} turns are shown.`
            : `The latest ${formatInt(TURN_WINDOW)} of ${formatInt(allTimings.length)} turns are shown here and in the charts.`}{" "}
          <button type="button" className="link-button" onClick={() => setEveryTurn(!everyTurn)}>
            {everyTurn ? `Show the latest ${formatInt(TURN_WINDOW)}` : "Show every turn"}
          </button>
        </p>
      ) : null}
      <div className="table-scroll">
        <table className="data-table compact-table" data-testid="usage-table">
          <caption className="visually-hidden">Usage per turn</caption>
          <thead>
            <tr>
              <th scope="col">Turn</th>
              <th scope="col">Status</th>
              <TokenCostHeaders />
              <th scope="col" className="num">
                Calls
              </th>
              <th scope="col" className="num">
                Fall&shy;backs
              </th>
              <th scope="col" className="num">
                Tools
              </th>
              <th scope="col" className="num">
                TTFT
              </th>
              <th scope="col" className="num">
                Elapsed (sum)
              </th>
              <th scope="col" className="num">
                Wall time
              </th>
            </tr>
          </thead>
          <tbody>
            {timings.map((timing) => {
              const rollup = rollups.get(timing.turn_index);
              return (
                <UsageRow
                  key={timing.turn_index}
                  label={`${timing.turn_index}`}
                  status={statuses.get(timing.turn_index) ?? null}
                  rollup={rollup ?? null}
                  ttft={timing.ttft_ms}
                  unread={lastReadTurn !== null && timing.turn_index >= lastReadTurn}
                  wall={timing.wall_time_ms}
                />
              );
            })}
          </tbody>
          <tfoot>
            <UsageRow
              label="Session"
              status={null}
              rollup={usage.session}
              ttft={null}
              wall={
                usage.session.turn_wall_time_ms ??
                sumKnown(allTimings.map((timing) => timing.wall_time_ms))
              }
            />
          </tfoot>
        </table>
      </div>
      <p className="muted small">
        Elapsed adds up every call's duration; wall time is the turn's clock, smaller when work
        overlapped. Cost is the provider's reported figure where it sent one, else the lab's price
        table; hover a source for details.
      </p>
      <h2 className="section-title">Calls</h2>
      <PagedCallsTable
        sessionId={sessionId}
        callCount={usage.session.call_count}
        requestedModel={requestedModel}
        onInspect={setInspected}
      />
      {inspected ? (
        <CallInspector
          key={inspected.id}
          sessionId={sessionId}
          call={inspected}
          onClose={() => setInspected(null)}
        />
      ) : null}
      <div className="chart-grid">
        <TokensChart turns={shownRollups} />
        <TimingChart timings={timings} />
      </div>
      <WaterfallChart
        layout={layout}
        turnIndexes={turnIndexes}
        turnIndex={waterfallTurn}
        onTurnChange={setSelected}
      />
    </div>
  );
}

function sumKnown(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0);
}

/** Statuses whose usage stops part way: the row says so, or its counts read as a whole turn's. */
const STOPPED_NOTES: Record<string, string> = {
  cancelled: "cancelled: usage counts the calls made until the cancel",
  failed: "failed: usage counts the calls made until the failure",
  interrupted: "interrupted: usage counts the calls recorded before the runner stopped",
};

function UsageRow({
  label,
  status,
  rollup,
  ttft,
  unread = false,
  wall,
}: {
  label: string;
  status: string | null;
  rollup: UsageRollup | null;
  ttft: number | null;
  /** The turn's calls were not (all) read: a missing TTFT is unknown here, not absent. */
  unread?: boolean;
  wall: number | null;
}) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="status-cell" data-testid="usage-status">
        {status === null ? null : STOPPED_NOTES[status] ? (
          <span className={`usage-status usage-status-${status}`} title={STOPPED_NOTES[status]}>
            {status} <span className="muted">(partial)</span>
          </span>
        ) : (
          status.replace("_", " ")
        )}
      </td>
      <td className="num">{formatInt(rollup?.prompt_tokens)}</td>
      <td className="num">{formatInt(rollup?.cached_tokens)}</td>
      <td className="num">{formatInt(rollup?.completion_tokens)}</td>
      <td className="num strong">
        {formatInt(rollup?.total_tokens)}
        <EstimatedMark rollup={rollup} />
      </td>
      <td className="num">{formatInt(rollup?.reasoning_tokens)}</td>
      <td className="num">{formatInt(rollup?.cache_write_tokens)}</td>
      <td className="num">{rollup ? <CostFigure label={rollupCostLabel(rollup)} /> : "—"}</td>
      <td className="num">{formatInt(rollup?.call_count)}</td>
      <td className="num">{formatInt(rollup?.fallback_count)}</td>
      <td className="num">{formatInt(rollup?.tool_count)}</td>
      <td className="num" data-testid="usage-ttft">
        {ttft === null && unread ? (
          <span
            className="muted"
            title="This turn's calls are past the first ones the page read: Read further (above) reads more"
          >
            not read
          </span>
        ) : (
          formatMs(ttft)
        )}
      </td>
      <td className="num">{formatMs(rollup?.elapsed_ms)}</td>
      <td className="num">{formatMs(wall)}</td>
    </tr>
  );
}
