import type { CellSummary } from "../api-types.js";
import {
  compareCells,
  formatCellDelta,
  formatCellMetric,
  formatInterval,
  formatRelativeChange,
} from "../experiment-matrix.js";

function CompareSide({ label, cell }: { label: string; cell: CellSummary }) {
  return (
    <div className="cell-compare-side" data-testid={`cell-compare-${label.toLowerCase()}`}>
      <span className="side-label" aria-hidden="true">
        {label}
      </span>
      <div>
        <strong className="cell-name">{cell.label}</strong>
        <div className="muted small">
          {cell.successes}/{cell.runs} runs succeeded · 95% CI {formatInterval(cell.success_ci)}
        </div>
      </div>
    </div>
  );
}

/**
 * Two configurations side by side: each metric for A and B, B − A and the change relative to A,
 * coloured by better or worse (the compare page's colours).
 */
export function ExperimentCellCompare({
  a,
  b,
  onClose,
}: {
  a: CellSummary;
  b: CellSummary;
  onClose: () => void;
}) {
  const rows = compareCells(a, b);
  return (
    <section
      className="card cell-compare"
      data-testid="cell-compare"
      aria-labelledby="cell-compare-heading"
    >
      <div className="panel-head">
        <h2 id="cell-compare-heading">Compare configurations</h2>
        <button type="button" className="button button-small" onClick={onClose}>
          Clear
        </button>
      </div>
      <div className="cell-compare-sides">
        <CompareSide label="A" cell={a} />
        <CompareSide label="B" cell={b} />
      </div>
      <div className="table-scroll">
        <table className="data-table compare-table cell-compare-table">
          <caption className="visually-hidden">
            {b.label} (B) compared with {a.label} (A)
          </caption>
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
                <td className="num">{formatCellMetric(row.unit, row.a)}</td>
                <td className="num">{formatCellMetric(row.unit, row.b)}</td>
                <td className={`num delta-${row.verdict}`}>{formatCellDelta(row)}</td>
                <td className={`num delta-${row.verdict}`}>
                  {formatRelativeChange(row.percent)}
                  {row.verdict === "better" || row.verdict === "worse" ? (
                    <span className="visually-hidden"> ({row.verdict})</span>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="legend-note small">
        <span className="delta-better">Green</span> is better,{" "}
        <span className="delta-worse">red</span> is worse. Δ is B − A; % is relative to A. With few
        runs a difference in success can be chance: compare the intervals.
      </p>
    </section>
  );
}
