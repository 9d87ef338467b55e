import type { TurnUsageRollup } from "../api-types.js";
import { rollupCostLabel } from "../cost.js";
import { formatInt, formatMs } from "../format.js";
import { estimatedLabel } from "../metrics.js";
import type { TranscriptTurn } from "../transcript.js";
import { isRetryable, turnOutcome } from "../turn-outcome.js";
import { CostFigure } from "./cost-figure.js";
import { SafeMarkdown } from "./markdown.js";
import { OutcomeBadge } from "./status.js";
import { ToolCard } from "./tool-card.js";

/**
 * The model's thinking, collapsed and dim: it is not the answer. While it streams the summary
 * says so; it opens like any disclosure.
 */
function ReasoningBlock({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <details className="reasoning" data-testid="reasoning">
      <summary className="reasoning-summary">
        {streaming ? <span className="spinner spinner-small" aria-hidden="true" /> : null}
        Thinking{streaming ? "…" : ""} · {formatInt(text.length)}{" "}
        {text.length === 1 ? "char" : "chars"}
      </summary>
      <div className="reasoning-text">{text}</div>
    </details>
  );
}

function TurnUsage({ usage }: { usage: TurnUsageRollup }) {
  const estimated = estimatedLabel(usage);
  const cost = rollupCostLabel(usage);
  return (
    <span className="muted turn-usage" data-testid="turn-usage">
      {formatInt(usage.total_tokens)} tokens
      {estimated ? (
        <span className="estimated-mark" title={estimated.title}>
          {" "}
          ({estimated.text})
        </span>
      ) : null}
      {cost.source !== "none" ? (
        <>
          {" · "}
          <CostFigure label={cost} testId="turn-cost" />
        </>
      ) : null}
    </span>
  );
}

/** One turn: the user's message, then each round's thinking, answer and tool cards. */
export function TurnView({
  turn,
  live = false,
  sessionId,
  usage = null,
  busy = false,
  retriedInTurn = null,
  onRetry,
  onFork,
}: {
  turn: TranscriptTurn;
  /** The stored turn's usage: its tokens and cost go in the header. */
  usage?: TurnUsageRollup | null;
  live?: boolean;
  /** A live turn's session: its cards waiting for approval can be answered. */
  sessionId?: string;
  /** A turn runs: Retry waits for it. */
  busy?: boolean;
  /** A later turn already sent this failed turn's message again: said instead of Retry. */
  retriedInTurn?: number | null;
  /** Runs a failed (cancelled, cut-off) turn's message again as a new turn. */
  onRetry?: (() => void) | undefined;
  /** Opens the fork form after this turn. */
  onFork?: (() => void) | undefined;
}) {
  const multipleRounds = turn.rounds.length > 1;
  const outcome = turnOutcome(turn);
  const retryable =
    onRetry !== undefined && !live && isRetryable(turn.status) && retriedInTurn === null;
  const retried = !live && isRetryable(turn.status) && retriedInTurn !== null;
  return (
    <article
      className={`turn ${live ? "turn-live" : ""}`}
      aria-label={turn.turn_index === null ? "New turn" : `Turn ${turn.turn_index}`}
    >
      <header className="turn-head">
        <span className="turn-number">
          {turn.turn_index === null ? "Turn" : `Turn ${turn.turn_index}`}
        </span>
        {live && turn.status === "running" ? null : <OutcomeBadge outcome={outcome} />}
        {turn.wall_time_ms !== null ? (
          <span className="muted">{formatMs(turn.wall_time_ms)}</span>
        ) : null}
        {usage && usage.call_count > 0 ? <TurnUsage usage={usage} /> : null}
        {onFork && !live ? (
          <button
            type="button"
            className="button button-small turn-action"
            data-testid="fork-button"
            title="A new session with the conversation up to this turn"
            onClick={onFork}
          >
            Fork here
          </button>
        ) : null}
      </header>
      <div className="message message-user" data-testid="user-message">
        <div className="message-role">You</div>
        <div className="message-text">{turn.user_message}</div>
      </div>
      {turn.rounds.map((round) => {
        const streaming = live && turn.status === "running";
        const waiting =
          streaming &&
          round.text === "" &&
          round.reasoning === "" &&
          round.refusal === "" &&
          round.tools.length === 0;
        return (
          <div className="round" key={round.round_index}>
            {multipleRounds || live ? (
              <div className="round-label">Round {round.round_index}</div>
            ) : null}
            {round.reasoning !== "" ? (
              <ReasoningBlock
                text={round.reasoning}
                streaming={streaming && round.text === "" && round.tools.length === 0}
              />
            ) : null}
            {round.refusal !== "" ? (
              <div className="message message-refusal" data-testid="refusal-message">
                <div className="message-role">Refused</div>
                <div className="message-text">{round.refusal}</div>
              </div>
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
      {turn.error || retryable || retried ? (
        <div
          className={`notice ${turn.error ? "notice-error" : "notice-warn"} turn-failure`}
          role={turn.error ? "alert" : undefined}
          data-testid="turn-error"
        >
          {turn.error ? (
            <span>
              <strong>{turn.error.code}:</strong> {turn.error.message}
            </span>
          ) : (
            <span>This turn ended {turn.status.replace("_", " ")} before its answer.</span>
          )}
          {retryable ? (
            <button
              type="button"
              className="button button-small"
              data-testid="retry-turn"
              disabled={busy}
              title="Send this turn's message again as a new turn; this one is kept"
              onClick={onRetry}
            >
              Retry
            </button>
          ) : null}
          {retried ? (
            <span className="muted turn-retried" data-testid="turn-retried">
              retried in turn {retriedInTurn}
            </span>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}
