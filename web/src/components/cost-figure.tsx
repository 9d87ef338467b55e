import type { CostLabel } from "../cost.js";

/** An amount of money and where it comes from; the tooltip explains the source. */
export function CostFigure({ label, testId = "cost" }: { label: CostLabel; testId?: string }) {
  return (
    <span data-testid={testId} data-source={label.source} title={label.title}>
      {label.amount}
      {label.text !== "" ? " " : null}
      {label.text !== "" ? (
        <span className={`cost-source cost-source-${label.source}`}>{label.text}</span>
      ) : null}
    </span>
  );
}
