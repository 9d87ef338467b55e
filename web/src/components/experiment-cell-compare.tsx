import type { CellSummary } from "../api-types.js";
import {
  compareCells,
  formatCellDelta,
  formatCellMetric,
  formatInterval,
  formatRelativeChange,
} from "../experiment-matrix.js";
import { type DeltaFormat, DeltaTable } from "./delta-table.js";

const CELL_FORMAT: DeltaFormat<ReturnType<typeof compareCells>[number]> = {
  value: (row, value) => formatCellMetric(row.unit, value),
  delta: formatCellDelta,
  relative: (row) => formatRelativeChange(row.percent),
};

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
      <DeltaTable
        rows={rows}
        caption={`${b.label} (B) compared with ${a.label} (A)`}
        format={CELL_FORMAT}
        className="cell-compare-table"
        testId={undefined}
      />
      <p className="legend-note small">
        <span className="delta-better">Green</span> is better,{" "}
        <span className="delta-worse">red</span> is worse. Δ is B − A; % is relative to A. With few
        runs a difference in success can be chance: compare the intervals.
      </p>
    </section>
  );
}
