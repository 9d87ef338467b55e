import { formatInt, formatMs, formatPercent } from "../format.js";
import type { MetricDelta } from "../metrics.js";

/** The compare table: A, B, B − A and the change relative to A, coloured by better or worse. */
function formatValue(row: MetricDelta, value: number | null): string {
  if (row.unit === "ms") return formatMs(value);
  if (row.unit === "ratio") return formatPercent(value);
  return formatInt(value);
}

function formatDelta(row: MetricDelta): string {
  if (row.delta === null) return "—";
  const sign = row.delta > 0 ? "+" : row.delta < 0 ? "−" : "±";
  const magnitude = Math.abs(row.delta);
  if (row.unit === "ratio") return `${sign}${(magnitude * 100).toFixed(1)} pp`;
  return `${sign}${row.unit === "ms" ? formatMs(magnitude) : formatInt(magnitude)}`;
}

function formatRelative(row: MetricDelta): string {
  if (row.percent === null) return "—";
  const sign = row.percent > 0 ? "+" : row.percent < 0 ? "−" : "±";
  return `${sign}${(Math.abs(row.percent) * 100).toFixed(1)}%`;
}

export function DeltaTable({ rows }: { rows: MetricDelta[] }) {
  return (
    <div className="table-scroll">
      <table className="data-table compare-table" data-testid="compare-table">
        <caption className="visually-hidden">Session B compared with session A</caption>
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col" className="num">
              A
            </th>
            <th scope="col" className="num">
              B
            </th>
            <th scope="col" className="num">
              Δ (B − A)
            </th>
            <th scope="col" className="num">
              Δ %
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key} data-metric={row.key} data-verdict={row.verdict}>
              <th scope="row" className="metric-name">
                {row.label}
                <span className="direction-hint">
                  {row.direction === "lower"
                    ? " (lower is better)"
                    : row.direction === "higher"
                      ? " (higher is better)"
                      : ""}
                </span>
              </th>
              <td className="num">{formatValue(row, row.a)}</td>
              <td className="num">{formatValue(row, row.b)}</td>
              <td className={`num delta-${row.verdict}`}>{formatDelta(row)}</td>
              <td className={`num delta-${row.verdict}`}>
                {formatRelative(row)}
                {row.verdict === "better" || row.verdict === "worse" ? (
                  <span className="visually-hidden"> ({row.verdict})</span>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
