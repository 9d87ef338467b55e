/**
 * What a turn achieved, beyond the status the runtime stored: a turn "completed" whose every tool
 * call failed did not do what it was asked, and must not look like a green success.
 */
import { isRetriedBy, isRetryableStatus } from "../../src/domain/turn-retry-rule.js";
import type { TranscriptTurn } from "./transcript.js";

export type OutcomeTone = "ok" | "warn" | "error" | "running";

export interface TurnOutcome {
  /** What the badge says. */
  label: string;
  tone: OutcomeTone;
  tool_calls: number;
  tool_errors: number;
  /** Argument repairs by the event agent that produced arguments, and that did not. */
  fallbacks_ok: number;
  fallbacks_failed: number;
  /** Completed, with tool calls, none of which succeeded. */
  all_tools_failed: boolean;
}

/** Statuses the retry endpoint accepts (the turn did not reach its answer). */
export const isRetryable = isRetryableStatus;

const TONES: Record<string, OutcomeTone> = {
  running: "running",
  completed: "ok",
  cancelled: "warn",
  max_rounds: "warn",
  failed: "error",
  interrupted: "error",
};

export function turnOutcome(turn: Pick<TranscriptTurn, "status" | "rounds">): TurnOutcome {
  let tool_calls = 0;
  let tool_errors = 0;
  let fallbacks_ok = 0;
  let fallbacks_failed = 0;
  for (const round of turn.rounds) {
    for (const card of round.tools) {
      tool_calls += 1;
      if (card.state === "error") tool_errors += 1;
      if (card.fallback?.state === "ok") fallbacks_ok += 1;
      if (card.fallback?.state === "failed") fallbacks_failed += 1;
    }
  }
  const all_tools_failed =
    turn.status === "completed" && tool_calls > 0 && tool_errors === tool_calls;
  const base = turn.status.replace("_", " ");
  const counts = { tool_calls, tool_errors, fallbacks_ok, fallbacks_failed, all_tools_failed };
  if (all_tools_failed) {
    const what = tool_calls === 1 ? "its tool call failed" : `all ${tool_calls} tool calls failed`;
    return { ...counts, label: `${base} · ${what}`, tone: "warn" };
  }
  if (turn.status === "completed" && tool_errors > 0) {
    return {
      ...counts,
      label: `${base} · ${tool_errors} of ${tool_calls} tool calls failed`,
      // Some calls worked (often a corrected second try): a success, with the failures said.
      tone: "ok",
    };
  }
  return { ...counts, label: base, tone: TONES[turn.status] ?? "warn" };
}

/**
 * The turn that retried this one, if any: a turn that did not reach its answer, followed by a turn
 * with the same user message (what Retry creates; the replay reads the pair the same way).
 */
export function retriedIn(
  transcript: readonly Pick<TranscriptTurn, "turn_index" | "status" | "user_message">[],
  position: number,
): number | null {
  const turn = transcript[position];
  const next = transcript[position + 1];
  if (turn === undefined || next?.turn_index == null || !isRetriedBy(turn, next)) return null;
  return next.turn_index;
}
