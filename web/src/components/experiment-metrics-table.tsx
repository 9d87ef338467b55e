import type { CellSummary } from "../api-types.js";
import { experimentCostLabel } from "../cost.js";
import { formatInterval } from "../experiment-matrix.js";
import { formatInt, formatMs, formatPercent } from "../format.js";
import { CostFigure } from "./cost-figure.js";

function Pair({ p50, p95 }: { p50: number | null; p95: number | null }) {
  return (
    <>
      {formatMs(p50)}
      <span className="muted"> / {formatMs(p95)}</span>
    </>
  );
}

/** Per configuration: success with its interval, latency percentiles, tokens, reliability, cost. */
export function ExperimentMetricsTable({ cells }: { cells: CellSummary[] }) {
  return (
    <div className="table-scroll table-card">
      <table className="data-table experiment-metrics" data-testid="experiment-metrics">
        <caption className="visually-hidden">Metrics per configuration</caption>
        <thead>
          <tr>
            <th scope="col" className="cell-col">
              Configuration
            </th>
            <th scope="col" className="num">
              Success <span className="muted th-note">(95% CI)</span>
            </th>
            <th scope="col" className="num">
              TTFT <span className="muted th-note">p50 / p95</span>
            </th>
            <th scope="col" className="num">
              Wall <span className="muted th-note">p50 / p95</span>
            </th>
            <th scope="col" className="num">
              Tokens / turn
            </th>
            <th scope="col" className="num">
              Cached
            </th>
            <th scope="col" className="num" title="Argument fallbacks per tool execution">
              Fallbacks
            </th>
            <th scope="col" className="num" title="Failed tool executions per tool execution">
              Tool errors
            </th>
            <th scope="col" className="num">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {cells.map((cell) => (
            <tr key={cell.cell} data-cell-id={cell.cell}>
              <th scope="row" className="cell-col">
                {cell.label}
              </th>
              <td className="num">
                {cell.runs > 0 ? formatPercent(cell.success_rate, 0) : "—"}
                <span className="muted">
                  {" "}
                  {cell.runs > 0 ? formatInterval(cell.success_ci) : ""}
                </span>
              </td>
              <td className="num">
                <Pair p50={cell.ttft_p50_ms} p95={cell.ttft_p95_ms} />
              </td>
              <td className="num">
                <Pair p50={cell.wall_p50_ms} p95={cell.wall_p95_ms} />
              </td>
              <td className="num">{formatInt(cell.tokens_per_turn)}</td>
              <td className="num">{formatPercent(cell.cached_share)}</td>
              <td className="num">{formatPercent(cell.fallback_rate)}</td>
              <td className="num">{formatPercent(cell.tool_error_rate)}</td>
              <td className="num">
                <CostFigure
                  label={experimentCostLabel(cell.cost_usd, cell.cost_source, cell.runs)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
