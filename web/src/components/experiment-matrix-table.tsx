import type { CellSummary } from "../api-types.js";
import {
  categoryLabel,
  categoryTally,
  formatInterval,
  type SuccessTally,
  successLevel,
} from "../experiment-matrix.js";
import { formatPercent } from "../format.js";

/** A success rate on its colour band, with the counts behind it. */
export function SuccessCell({ tally, interval }: { tally: SuccessTally; interval?: string }) {
  const level = successLevel(tally.rate);
  if (tally.rate === null) {
    return (
      <td className="num success-cell success-none" data-level="none">
        <span aria-hidden="true">—</span>
        <span className="visually-hidden">not run</span>
      </td>
    );
  }
  return (
    <td
      className={`num success-cell success-${level}`}
      data-level={level}
      title={`${tally.successes} of ${tally.runs} runs succeeded`}
    >
      <span className="success-rate">{formatPercent(tally.rate, 0)}</span>
      <span className="success-count">
        {tally.successes}/{tally.runs}
      </span>
      {interval ? <span className="success-ci">{interval}</span> : null}
    </td>
  );
}

/**
 * Cells as rows, scenario categories as columns: the share of runs that succeeded, coloured. The
 * cell's name opens its runs; the checkbox picks it for a side-by-side comparison.
 */
export function ExperimentMatrixTable({
  cells,
  categories,
  openCell,
  compare,
  onOpen,
  onToggleCompare,
}: {
  cells: CellSummary[];
  categories: string[];
  openCell: string | null;
  compare: readonly string[];
  onOpen: (cell: string) => void;
  onToggleCompare: (cell: string, checked: boolean) => void;
}) {
  return (
    <div className="table-scroll table-card">
      <table className="data-table experiment-matrix" data-testid="experiment-matrix">
        <caption className="visually-hidden">
          Share of successful runs per configuration (rows) and scenario category (columns)
        </caption>
        <thead>
          <tr>
            <th scope="col" className="compare-col">
              <span className="visually-hidden">Compare</span>
            </th>
            <th scope="col" className="cell-col">
              Configuration
            </th>
            <th scope="col" className="num">
              All <span className="muted th-note">(95% CI)</span>
            </th>
            {categories.map((category) => (
              <th scope="col" className="num" key={category}>
                {categoryLabel(category)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {cells.map((cell) => {
            const open = openCell === cell.cell;
            return (
              <tr
                key={cell.cell}
                data-cell-id={cell.cell}
                className={open ? "row-open" : undefined}
              >
                <td className="compare-col">
                  <input
                    type="checkbox"
                    data-testid="cell-compare-checkbox"
                    aria-label={`Compare ${cell.label}`}
                    checked={compare.includes(cell.cell)}
                    onChange={(event) => onToggleCompare(cell.cell, event.target.checked)}
                  />
                </td>
                <th scope="row" className="cell-col">
                  <button
                    type="button"
                    className="link-button cell-button"
                    data-testid="experiment-cell"
                    aria-expanded={open}
                    onClick={() => onOpen(cell.cell)}
                    title="Show this configuration's runs"
                  >
                    {cell.label}
                  </button>
                </th>
                <SuccessCell
                  tally={{
                    runs: cell.runs,
                    successes: cell.successes,
                    rate: cell.runs > 0 ? cell.success_rate : null,
                  }}
                  interval={cell.runs > 0 ? formatInterval(cell.success_ci) : ""}
                />
                {categories.map((category) => (
                  <SuccessCell key={category} tally={categoryTally(cell, category)} />
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
