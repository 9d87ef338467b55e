import { compareHref, navigate } from "../router.js";
import { MAX_PICKS, type Pick } from "../session-selection.js";

/** The sessions ticked for comparison, whatever the list shows now, with Compare and Clear. */
export function SelectionBar({ picks, onClear }: { picks: readonly Pick[]; onClear: () => void }) {
  const [first, second] = picks;
  return (
    <div className="selection-bar" data-testid="selection-bar" aria-live="polite">
      <span data-testid="selection-count">
        {picks.length === 0
          ? `Tick ${MAX_PICKS} sessions to compare them`
          : `${picks.length} selected`}
      </span>
      {picks.length > 0 ? (
        <span className="selection-names">
          {picks.map((pick) => (
            <span key={pick.id} className="selection-name" data-testid="selection-name">
              {pick.title}
            </span>
          ))}
        </span>
      ) : null}
      <span className="selection-actions">
        <button
          type="button"
          className="button button-small button-primary"
          data-testid="compare-selected"
          disabled={!first || !second}
          onClick={() => navigate(compareHref(first?.id ?? null, second?.id ?? null))}
          title={`Tick ${MAX_PICKS} sessions to compare them`}
        >
          Compare selected ({picks.length}/{MAX_PICKS})
        </button>
        {picks.length > 0 ? (
          <button
            type="button"
            className="button button-small"
            data-testid="clear-selection"
            onClick={onClear}
          >
            Clear
          </button>
        ) : null}
      </span>
    </div>
  );
}
