import { formatMs } from "../format.js";
import type { TranscriptTurn } from "../transcript.js";
import { SafeMarkdown } from "./markdown.js";
import { StatusBadge } from "./status.js";
import { ToolCard } from "./tool-card.js";

/** One turn: the user's message, then each round's text and tool cards. */
export function TurnView({
  turn,
  live = false,
  sessionId,
}: {
  turn: TranscriptTurn;
  live?: boolean;
  /** A live turn's session: its cards waiting for approval can be answered. */
  sessionId?: string;
}) {
  const multipleRounds = turn.rounds.length > 1;
  return (
    <article
      className={`turn ${live ? "turn-live" : ""}`}
      aria-label={turn.turn_index === null ? "New turn" : `Turn ${turn.turn_index}`}
    >
      <header className="turn-head">
        <span className="turn-number">
          {turn.turn_index === null ? "Turn" : `Turn ${turn.turn_index}`}
        </span>
        {live && turn.status === "running" ? null : <StatusBadge status={turn.status} />}
        {turn.wall_time_ms !== null ? (
          <span className="muted">{formatMs(turn.wall_time_ms)}</span>
        ) : null}
      </header>
      <div className="message message-user" data-testid="user-message">
        <div className="message-role">You</div>
        <div className="message-text">{turn.user_message}</div>
      </div>
      {turn.rounds.map((round) => {
        const waiting =
          live && turn.status === "running" && round.text === "" && round.tools.length === 0;
        return (
          <div className="round" key={round.round_index}>
            {multipleRounds || live ? (
              <div className="round-label">Round {round.round_index}</div>
            ) : null}
            {round.text !== "" ? (
              <div className="message message-assistant" data-testid="assistant-message">
                <div className="message-role">Assistant</div>
                <SafeMarkdown text={round.text} />
              </div>
            ) : null}
            {waiting ? (
              <p className="muted thinking">
                <span className="spinner spinner-small" aria-hidden="true" /> Waiting for the model…
              </p>
            ) : null}
            {round.tools.length > 0 ? (
              <div className="tool-cards">
                {round.tools.map((card) => (
                  <ToolCard
                    key={card.id}
                    card={card}
                    {...(sessionId !== undefined ? { sessionId } : {})}
                  />
                ))}
              </div>
            ) : null}
          </div>
        );
      })}
      {turn.notices.length > 0 ? (
        <ul className="turn-notices">
          {turn.notices.map((notice, index) => (
            // Notices only grow and never reorder, so their position is a stable key.
            // biome-ignore lint/suspicious/noArrayIndexKey: append-only list
            <li key={index}>{notice}</li>
          ))}
        </ul>
      ) : null}
      {turn.error ? (
        <div className="notice notice-error" role="alert">
          <strong>{turn.error.code}:</strong> {turn.error.message}
        </div>
      ) : null}
    </article>
  );
}
