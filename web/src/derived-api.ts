/**
 * Sessions made from other sessions (see the README's "Fork, replay, retry"): a fork copies the
 * history up to a turn, a replay runs a session's user messages again under another config, a
 * retry runs a failed turn's message again as a new turn.
 */

import type { ReplayEvent as ReplayProgressEvent } from "../../src/domain/replay-events.js";
import { postSse, request, sessionPath } from "./api.js";
import type { SessionResponse, TurnEvent } from "./api-types.js";
import { parseTurnEvent } from "./sse.js";

/** Config overrides, merged over the source session's config by the server. */
export type ConfigOverrides = Record<string, unknown>;

export function forkSession(
  id: string,
  body: { turn_index: number; title?: string; config?: ConfigOverrides },
): Promise<SessionResponse> {
  return request<SessionResponse>(`${sessionPath(id)}/fork`, {
    method: "POST",
    body: JSON.stringify(body),
  });
}

/** Runs a failed (cancelled, interrupted, cut-off) turn's message again as a new turn. */
export function streamRetry(
  id: string,
  turnIndex: number,
  onEvent: (event: TurnEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  return postSse(
    `${sessionPath(id)}/turns/${turnIndex}/retry`,
    {},
    (sse) => {
      const event = parseTurnEvent(sse);
      if (event) onEvent(event);
    },
    signal,
  );
}

/** The replay's own events, and each replayed turn's events wrapped as `turn`. */
export type ReplayEvent = ReplayProgressEvent | { type: "turn"; event: TurnEvent };

const REPLAY_EVENTS = new Set(["replay", "replay_turn", "replay_done"]);

/** Replays a session's user messages into a new session, reporting its progress. */
export function streamReplay(
  id: string,
  body: { title?: string; config?: ConfigOverrides },
  onEvent: (event: ReplayEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  return postSse(
    `${sessionPath(id)}/replay`,
    body,
    (sse) => {
      if (REPLAY_EVENTS.has(sse.event)) {
        try {
          onEvent({ ...(JSON.parse(sse.data) as object), type: sse.event } as ReplayEvent);
        } catch {
          // A progress event that is not JSON tells nothing; the turns' own events still do.
        }
        return;
      }
      const event = parseTurnEvent(sse);
      if (event) onEvent({ type: "turn", event });
    },
    signal,
  );
}
