import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { ApiError, isAbortError, streamTurn } from "../api.js";
import type { TurnUsageRollup } from "../api-types.js";
import { rollupCostLabel } from "../cost.js";
import { formatInt, formatMs } from "../format.js";
import { applyTurnEvent, type LiveTurn, livePhase, liveTtft, startLiveTurn } from "../live-turn.js";
import type { TranscriptTurn } from "../transcript.js";
import { CostFigure } from "./cost-figure.js";
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

interface ChatPanelProps {
  sessionId: string;
  transcript: TranscriptTurn[];
  /** Each stored turn's usage rollup, for the tokens and cost in its header. */
  turnUsage?: readonly TurnUsageRollup[];
  /** A turn stored as running that this page did not start (another tab, the CLI). */
  runningElsewhere: boolean;
  /** Reloads the stored record; `afterStop` waits until the cancelled turn is stored. */
  onTurnFinished: (afterStop: boolean) => Promise<void>;
}

/** The conversation, the running turn as it streams, and the message box with Send and Stop. */
export function ChatPanel({
  sessionId,
  transcript,
  turnUsage = [],
  runningElsewhere,
  onTurnFinished,
}: ChatPanelProps) {
  const [draft, setDraft] = useState("");
  const [live, setLive] = useState<LiveTurn | null>(null);
  const [running, setRunning] = useState(false);
  const [sendError, setSendError] = useState<unknown>(null);
  const controllerRef = useRef<AbortController | null>(null);
  const endRef = useRef<HTMLDivElement | null>(null);
  const inputId = useId();

  // Leaving the page stops the stream (and so the turn): nothing would be left to show it.
  useEffect(() => () => controllerRef.current?.abort(), []);

  const textLength = live?.turn.rounds.reduce((sum, round) => sum + round.text.length, 0) ?? 0;
  const toolCount = live?.turn.rounds.reduce((sum, round) => sum + round.tools.length, 0) ?? 0;
  // biome-ignore lint/correctness/useExhaustiveDependencies: follow the stream as it grows
  useEffect(() => {
    if (!running) return;
    // Follow the stream only while the reader is at the bottom; scrolling up to read stays put.
    const fromBottom =
      document.documentElement.scrollHeight - (window.scrollY + window.innerHeight);
    if (fromBottom < 240) endRef.current?.scrollIntoView({ block: "nearest" });
  }, [running, textLength, toolCount]);

  const send = async () => {
    const message = draft.trim();
    if (message === "" || running) return;
    const controller = new AbortController();
    controllerRef.current = controller;
    setSendError(null);
    setRunning(true);
    setLive(startLiveTurn(message));
    setDraft("");
    // The new turn is what the user wants to see, wherever they were on the page.
    requestAnimationFrame(() => endRef.current?.scrollIntoView({ block: "end" }));
    let started = false;
    let stopped = false;
    try {
      await streamTurn(
        sessionId,
        message,
        (event) => {
          started = true;
          setLive((current) => (current ? applyTurnEvent(current, event) : current));
        },
        controller.signal,
      );
    } catch (error) {
      if (controller.signal.aborted || isAbortError(error)) {
        stopped = true;
      } else {
        setSendError(error);
        // Refused before it started (409, bad input): give the text back to edit or resend.
        if (!started || (error instanceof ApiError && error.status >= 400)) setDraft(message);
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
    } catch {
      // Keep the live copy on screen; the page shows the load error.
    }
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void send();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };

  // Once the stored record holds the finished turn, it is drawn from there, not twice.
  const liveShown =
    live !== null &&
    !(live.finished && transcript.some((turn) => turn.turn_index === live.turn.turn_index));
  const lastStored = transcript.at(-1);
  const statusTurn = live?.turn ?? lastStored ?? null;
  return (
    <div className="chat">
      <div className="chat-log" aria-live="off">
        {transcript.length === 0 && !live ? (
          <EmptyState>No turns yet — send a message to start the conversation.</EmptyState>
        ) : null}
        {transcript.map((turn) => (
          <TurnView
            key={turn.turn_index ?? "live"}
            turn={turn}
            usage={turnUsage.find((rollup) => rollup.turn_index === turn.turn_index) ?? null}
          />
        ))}
        {live && liveShown ? <TurnView turn={live.turn} live sessionId={sessionId} /> : null}
        <div ref={endRef} />
      </div>

      <div className="composer-area">
        {runningElsewhere && !running ? (
          <div className="notice notice-warn">
            A turn of this session is running elsewhere; its result appears after a reload.
          </div>
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
  return (
    <div className="turn-status" data-testid="turn-status" data-status={turn.status} role="status">
      <span>
        {turn.turn_index === null ? "Last turn" : `Turn ${turn.turn_index}`}{" "}
        {turn.status.replace("_", " ")}
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
