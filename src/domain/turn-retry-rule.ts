import type { TurnRecordStatus } from "./records.js";

/** The statuses of a turn that did not get to its answer, which a retry may run again. */
export const RETRYABLE_STATUSES: readonly TurnRecordStatus[] = [
  "failed",
  "cancelled",
  "interrupted",
  "max_rounds",
];

export const isRetryableStatus = (status: string): boolean =>
  (RETRYABLE_STATUSES as readonly string[]).includes(status);

/**
 * Whether `next` is a retry of `turn`: the turn did not reach its answer and the next one sends the
 * same user message (what Retry creates). The replay leaves such a turn out and the chat shows
 * "retried in turn N" on it, by this one rule; a retry records no link of its own.
 */
export function isRetriedBy(
  turn: { status: string; user_message: string },
  next: { user_message: string } | undefined,
): boolean {
  return (
    next !== undefined && isRetryableStatus(turn.status) && next.user_message === turn.user_message
  );
}
