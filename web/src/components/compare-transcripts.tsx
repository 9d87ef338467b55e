import type { TranscriptTurn } from "../transcript.js";
import { EmptyState } from "./status.js";
import { TurnView } from "./turn-view.js";

/**
 * The two conversations side by side, turn by turn: the same question (a replay, or a fork's
 * shared history) on one row, so the answers and tool calls read across.
 */
export function CompareTranscripts({ a, b }: { a: TranscriptTurn[]; b: TranscriptTurn[] }) {
  const indexes = [
    ...new Set([...a, ...b].map((turn) => turn.turn_index).filter((index) => index !== null)),
  ].sort((left, right) => left - right);
  const byIndex = (turns: TranscriptTurn[]) =>
    new Map(turns.map((turn) => [turn.turn_index, turn]));
  const left = byIndex(a);
  const right = byIndex(b);
  return (
    <section
      className="card compare-transcripts"
      aria-labelledby="compare-transcripts-heading"
      data-testid="compare-transcripts"
    >
      <h2 id="compare-transcripts-heading">Transcripts</h2>
      {indexes.length === 0 ? <EmptyState>Neither session has turns yet.</EmptyState> : null}
      {indexes.map((index) => {
        const turnA = left.get(index);
        const turnB = right.get(index);
        return (
          <div className="compare-transcript-row" key={index} data-testid="compare-transcript-row">
            <div className="compare-transcript-cell" data-side="a">
              <span className="side-label" title="Session A">
                A
              </span>
              {turnA ? <TurnView turn={turnA} /> : <p className="muted">No turn {index}.</p>}
            </div>
            <div className="compare-transcript-cell" data-side="b">
              <span className="side-label" title="Session B">
                B
              </span>
              {turnB ? <TurnView turn={turnB} /> : <p className="muted">No turn {index}.</p>}
            </div>
          </div>
        );
      })}
    </section>
  );
}
