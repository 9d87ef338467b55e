import type { TurnRecordStatus } from "./records.js";

/**
 * What a replay reports around the turn events of the turns it runs (POST
 * /api/sessions/:id/replay, `agent-lab replay`): data only, snake_case, JSON-safe.
 */
export type ReplayEvent =
  | {
      type: "replay";
      /** The new session the source's user messages run in. */
      session_id: string;
      source_session_id: string;
      /** How many user messages will be replayed. */
      turns: number;
    }
  /** Opens each replayed turn; `turn_index` counts from 1 up to `of`. */
  | { type: "replay_turn"; turn_index: number; of: number }
  /** How each replayed turn ended, in order; fewer than `turns` when the replay was stopped. */
  | { type: "replay_done"; session_id: string; statuses: TurnRecordStatus[] };
