import { formatCost } from "../cost.js";
import { formatInt, formatMs, formatPercent } from "../format.js";
import type { MetricDelta } from "../metrics.js";

function formatValue(row: MetricDelta, value: number | null): string {
  if (row.unit === "ms") return formatMs(value);
  if (row.unit === "ratio") return formatPercent(value);
  if (row.unit === "usd") return formatCost(value);
  return formatInt(value);
}

function formatDelta(row: MetricDelta): string {
  if (row.delta === null) return "—";
  const sign = row.delta > 0 ? "+" : row.delta < 0 ? "−" : "±";
  const magnitude = Math.abs(row.delta);
  if (row.unit === "ratio") return `${sign}${(magnitude * 100).toFixed(1)} pp`;
  if (row.unit === "usd") return `${sign}${formatCost(magnitude)}`;
  return `${sign}${row.unit === "ms" ? formatMs(magnitude) : formatInt(magnitude)}`;
}

function formatRelative(row: MetricDelta): string {
  if (row.percent === null) return "—";
  const sign = row.percent > 0 ? "+" : row.percent < 0 ? "−" : "±";
  return `${sign}${(Math.abs(row.percent) * 100).toFixed(1)}%`;
}

/** What every compared row has; how its values read is up to the caller. */
export interface DeltaRow {
  key: string;
  label: string;
  direction: "lower" | "higher" | "neutral" | (string & {});
  verdict: string;
  a: number | null;
  b: number | null;
  /** Why the row is not coloured (noise, a mode it does not apply to). */
  note?: string | null;
}

export interface DeltaFormat<Row extends DeltaRow> {
  value(row: Row, value: number | null): string;
  delta(row: Row): string;
  relative(row: Row): string;
}

const SESSION_FORMAT: DeltaFormat<MetricDelta> = {
  value: formatValue,
  delta: formatDelta,
  relative: formatRelative,
};

/** The compare table: A, B, B − A and the change relative to A, coloured by better or worse. */
export function DeltaTable<Row extends DeltaRow = MetricDelta>({
  rows,
  caption = "Session B compared with session A",
  format = SESSION_FORMAT as unknown as DeltaFormat<Row>,
  className = "",
  testId = "compare-table",
}: {
  rows: Row[];
  caption?: string;
  format?: DeltaFormat<Row>;
  className?: string;
  testId?: string | undefined;
}) {
  /** A value a side's mode cannot have reads "n/a", not "—" (unknown). */
  const cell = (row: Row, value: number | null): string =>
    value === null && row.verdict === "not_applicable" ? "n/a" : format.value(row, value);
  return (
    <div className="table-scroll">
      <table className={`data-table compare-table ${className}`.trim()} data-testid={testId}>
        <caption className="visually-hidden">{caption}</caption>
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
                {row.note ? (
                  <span className="delta-note" data-testid="delta-note">
                    {row.note}
                  </span>
                ) : null}
              </th>
              <td className="num">{cell(row, row.a)}</td>
              <td className="num">{cell(row, row.b)}</td>
              <td className={`num delta-${row.verdict}`}>{format.delta(row)}</td>
              <td className={`num delta-${row.verdict}`}>
                {format.relative(row)}
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
