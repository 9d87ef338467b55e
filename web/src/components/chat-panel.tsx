import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import "../daily.css";
import { ApiError, isAbortError, streamTurn } from "../api.js";
import type { TurnEvent, TurnUsageRollup } from "../api-types.js";
import { rollupCostLabel } from "../cost.js";
import { streamRetry } from "../derived-api.js";
import { formatInt, formatMs } from "../format.js";
import { applyTurnEvent, type LiveTurn, livePhase, liveTtft, startLiveTurn } from "../live-turn.js";
import type { TranscriptTurn } from "../transcript.js";
import { retriedIn, turnOutcome } from "../turn-outcome.js";
import { useFollowLive } from "../use-follow-live.js";
import { CostFigure } from "./cost-figure.js";
import { ForkPanel } from "./fork-panel.js";
import { EmptyState, ErrorNotice } from "./status.js";
import { TurnView } from "./turn-view.js";

const PHASE_LABELS: Record<ReturnType<typeof livePhase>, string> = {
  starting: "starting",
  waiting: "waiting for the first token",
  thinking: "thinking",
  streaming: "streaming",
  repairing: "repairing tool arguments (event agent)",
  approval: "waiting for your approval",
  tools: "running tools",
  finished: "finished",
};

/** What the header counts while a turn streams: the turn's number and its tokens so far. */
export interface LiveProgress {
  turn_index: number | null;
  tokens: number;
}

type Start = (onEvent: (event: TurnEvent) => void, signal: AbortSignal) => Promise<void>;

interface ChatPanelProps {
  sessionId: string;
  /** The session's config: a fork starts from it. */
  config: Record<string, unknown>;
  transcript: TranscriptTurn[];
  /** Each stored turn's usage rollup, for the tokens and cost in its header. */
  turnUsage?: readonly TurnUsageRollup[];
  /** A turn stored as running that this page did not start (another tab, the CLI). */
  runningElsewhere: boolean;
  /** Reloads the stored record; `afterStop` waits until the cancelled turn is stored. */
  onTurnFinished: (afterStop: boolean) => Promise<void>;
  /** The running turn's progress (null when none streams), for the page header. */
  onLiveProgress?: (progress: LiveProgress | null) => void;
}

/** The conversation, the running turn as it streams, and the message box with Send and Stop. */
export function ChatPanel({
  sessionId,
  config,
  transcript,
  turnUsage = [],
  runningElsewhere,
  onTurnFinished,
  onLiveProgress,
}: ChatPanelProps) {
  const [draft, setDraft] = useState("");
  const [live, setLive] = useState<LiveTurn | null>(null);
  const [running, setRunning] = useState(false);
  const [sendError, setSendError] = useState<unknown>(null);
  const controllerRef = useRef<AbortController | null>(null);
  const inputId = useId();

  // Leaving the page stops the stream (and so the turn): nothing would be left to show it.
  useEffect(() => () => controllerRef.current?.abort(), []);

  const [forkAt, setForkAt] = useState<number | null>(null);
  const follow = useFollowLive(running, live);

  const send = () => {
    const message = draft.trim();
    if (message === "" || running) return;
    setDraft("");
    void run(message, (onEvent, signal) => streamTurn(sessionId, message, onEvent, signal), true);
  };

  const retry = (turn: TranscriptTurn) => {
    if (running || turn.turn_index === null) return;
    const index = turn.turn_index;
    void run(
      turn.user_message,
      (onEvent, signal) => streamRetry(sessionId, index, onEvent, signal),
      false,
    );
  };

  /** Streams a new turn (a message sent, or a failed turn's message again) and shows it live. */
  const run = async (message: string, start: Start, giveBack: boolean) => {
    const controller = new AbortController();
    controllerRef.current = controller;
    setSendError(null);
    setRunning(true);
    setLive(startLiveTurn(message));
    // The new turn is what the user wants to see, wherever they were on the page.
    follow.restart();
    let started = false;
    let stopped = false;
    try {
      await start((event) => {
        started = true;
        setLive((current) => (current ? applyTurnEvent(current, event) : current));
      }, controller.signal);
    } catch (error) {
      if (controller.signal.aborted || isAbortError(error)) {
        stopped = true;
      } else {
        setSendError(error);
        // Refused before it started (409, bad input): give the text back to edit or resend.
        if (giveBack && (!started || (error instanceof ApiError && error.status >= 400))) {
          setDraft(message);
        }
      }
    } finally {
      controllerRef.current = null;
    }
    setLive((current) => {
      if (!current || current.finished) return current;
      // The stream stopped without turn_end: the stored record will say how it ended.
      return {
        ...current,
        finished: true,
        turn: { ...current.turn, status: stopped ? "cancelled" : current.turn.status },
      };
    });
    setRunning(false);
    try {
      await onTurnFinished(stopped);
      // The stored record now shows this turn; drop the live copy unless it never started.
      setLive(null);
      follow.settle();
    } catch {
      // Keep the live copy on screen; the page shows the load error.
    }
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    send();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };

  // Once the stored record holds the finished turn, it is drawn from there, not twice.
  const liveShown =
    live !== null &&
    !(live.finished && transcript.some((turn) => turn.turn_index === live.turn.turn_index));
  const liveTokens = live?.usage_events.reduce((sum, usage) => sum + usage.total_tokens, 0) ?? 0;
  const liveIndex = live?.turn.turn_index ?? null;
  useEffect(() => {
    onLiveProgress?.(liveShown ? { turn_index: liveIndex, tokens: liveTokens } : null);
  }, [onLiveProgress, liveShown, liveIndex, liveTokens]);
  const lastStored = transcript.at(-1);
  const statusTurn = live?.turn ?? lastStored ?? null;
  return (
    <div className="chat">
      <div className="chat-log" aria-live="off">
        {transcript.length === 0 && !live ? (
          <EmptyState>No turns yet — send a message to start the conversation.</EmptyState>
        ) : null}
        {transcript.map((turn, position) => (
          <div key={turn.turn_index ?? "live"}>
            <TurnView
              turn={turn}
              usage={turnUsage.find((rollup) => rollup.turn_index === turn.turn_index) ?? null}
              busy={running}
              retriedInTurn={retriedIn(transcript, position)}
              onRetry={() => retry(turn)}
              onFork={
                turn.status === "running" || turn.turn_index === null
                  ? undefined
                  : () => setForkAt(turn.turn_index)
              }
            />
            {forkAt !== null && forkAt === turn.turn_index ? (
              <ForkPanel
                sessionId={sessionId}
                config={config}
                turnIndex={forkAt}
                onClose={() => setForkAt(null)}
              />
            ) : null}
          </div>
        ))}
        {live && liveShown ? <TurnView turn={live.turn} live sessionId={sessionId} /> : null}
      </div>

      <div className="composer-area">
        {runningElsewhere && !running ? (
          <div className="notice notice-warn">
            A turn of this session is running elsewhere; its result appears after a reload.
          </div>
        ) : null}
        {running && !follow.following ? (
          <button
            type="button"
            className="button button-small jump-to-live"
            data-testid="jump-to-live"
            onClick={follow.jump}
          >
            ↓ Jump to live
          </button>
        ) : null}
        {sendError ? <ErrorNotice error={sendError} title="The turn could not run" /> : null}
        <TurnStatusLine live={live} running={running} last={statusTurn} />
        <form className="composer" onSubmit={onSubmit}>
          <label htmlFor={inputId} className="visually-hidden">
            Message
          </label>
          <textarea
            id={inputId}
            data-testid="message-input"
            className="composer-input"
            placeholder="Ask something… (Enter to send, Shift+Enter for a new line)"
            rows={2}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onKeyDown}
          />
          <div className="composer-actions">
            {running ? (
              <button
                type="button"
                className="button button-danger"
                data-testid="stop-button"
                onClick={() => controllerRef.current?.abort()}
              >
                Stop
              </button>
            ) : null}
            <button
              type="submit"
              className="button button-primary"
              data-testid="send-button"
              disabled={running || draft.trim() === ""}
            >
              {running ? "Running…" : "Send"}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

function TurnStatusLine({
  live,
  running,
  last,
}: {
  live: LiveTurn | null;
  running: boolean;
  last: TranscriptTurn | null;
}) {
  if (live && running) {
    const phase = livePhase(live);
    const ttft = liveTtft(live);
    return (
      <div className="turn-status" data-testid="turn-status" data-status="running" role="status">
        <span className="spinner spinner-small" aria-hidden="true" />
        <span>
          {live.turn.turn_index === null ? "Turn" : `Turn ${live.turn.turn_index}`}
          {live.current_round > 0 ? ` · round ${live.current_round}` : ""} · {PHASE_LABELS[phase]}
          {ttft !== null ? ` · TTFT ${formatMs(ttft)}` : ""}
        </span>
      </div>
    );
  }
  const turn = live?.turn ?? last;
  if (!turn) return null;
  const usage = live?.usage ?? null;
  const cost = usage ? rollupCostLabel(usage) : null;
  const outcome = turnOutcome(turn);
  return (
    <div
      className="turn-status"
      data-testid="turn-status"
      data-status={turn.status}
      data-tone={outcome.tone}
      role="status"
    >
      <span>
        {turn.turn_index === null ? "Last turn" : `Turn ${turn.turn_index}`} {outcome.label}
        {turn.wall_time_ms !== null ? ` in ${formatMs(turn.wall_time_ms)}` : ""}
        {usage
          ? ` · ${formatInt(usage.total_tokens)} tokens${usage.estimated_count > 0 ? " (estimated)" : ""}`
          : ""}
      </span>
      {cost && cost.source !== "none" ? (
        <span>
          · <CostFigure label={cost} testId="turn-cost" />
        </span>
      ) : null}
    </div>
  );
}
