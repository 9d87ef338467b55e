import type { UsageRollup } from "../api-types.js";
import { estimatedLabel } from "../metrics.js";

/**
 * The token and cost columns every usage table shares, in one order: the turn table, the call
 * list (and their rows fill them in the same order).
 */
export function TokenCostHeaders() {
  return (
    <>
      <th scope="col" className="num">
        Prompt
      </th>
      <th scope="col" className="num">
        Cached
      </th>
      <th scope="col" className="num">
        Com&shy;pletion
      </th>
      <th scope="col" className="num">
        Total
      </th>
      <th scope="col" className="num" title="Part of the completion spent thinking">
        Reason&shy;ing
      </th>
      <th scope="col" className="num" title="Prompt tokens written to the provider's cache">
        Cache write
      </th>
      <th scope="col" className="num">
        Cost
      </th>
    </>
  );
}

/** " estimated" after a token figure that includes calls the lab counted itself; else nothing. */
export function EstimatedMark({
  rollup,
  testId = "usage-estimated",
}: {
  rollup: Pick<UsageRollup, "estimated_count"> | null | undefined;
  testId?: string;
}) {
  const estimated = estimatedLabel(rollup);
  if (!estimated) return null;
  return (
    <span className="muted small estimated-mark" title={estimated.title} data-testid={testId}>
      {" "}
      {estimated.text}
    </span>
  );
}
