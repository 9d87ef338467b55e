import { z } from "zod";
import { WellFormedString } from "./json-limits.js";
import { PageRequest } from "./pagination.js";
import type { SessionOverview, TurnRecordStatus } from "./records.js";
import { SessionTag, ToolInvocationMode } from "./session-config.js";

const TIMESTAMP_MESSAGE =
  "must be a date (YYYY-MM-DD) or an ISO 8601 timestamp with a zone (2026-12-01T09:30:00Z)";
const Timestamp = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  error: TIMESTAMP_MESSAGE,
});

/**
 * Which sessions a list shows: every filter is optional and they combine with AND. Each one is
 * answered from an indexed column (schema v4), never by parsing configs.
 */
export const SessionFilter = z.strictObject({
  /** Case-insensitive substring of the title. */
  q: WellFormedString.trim()
    .min(1)
    .max(200)
    // No title holds one (a database text cannot), and SQLite's search syntax ends at it.
    .refine((text) => !text.includes("\u0000"), "a search cannot hold a NUL character (U+0000)")
    .optional(),
  mode: ToolInvocationMode.optional(),
  /** The chat or the event agent's model string, exactly. */
  model: z.string().min(1).max(200).optional(),
  /** One of the session's `tags` (config), exactly. */
  tag: SessionTag.optional(),
  /** The status of the session's latest turn; "none" for a session without turns. */
  status: z
    .enum(["running", "completed", "cancelled", "failed", "max_rounds", "interrupted", "none"])
    .optional(),
  /** The experiment id the session ran for. */
  experiment: z.string().min(1).max(200).optional(),
  /**
   * Sessions that ran for an experiment (any id): `include` lists them with the others (the
   * store's default), `exclude` leaves them out, `only` lists nothing else. The faces default to
   * `exclude`, so one benchmark does not bury the sessions people opened themselves.
   */
  experiments: z
    .enum(["exclude", "include", "only"], { error: "experiments must be exclude, include or only" })
    .optional(),
  /** `updated_at` bounds, inclusive, as ISO 8601 timestamps or dates (YYYY-MM-DD). */
  updated_from: Timestamp.optional(),
  updated_to: Timestamp.optional(),
});
export type SessionFilter = z.infer<typeof SessionFilter>;

export const SessionQuery = SessionFilter.extend(PageRequest.shape);
export type SessionQuery = z.input<typeof SessionQuery>;

/** A session list row as the paged list returns it: the overview plus what its filters read. */
export interface SessionPageItem extends SessionOverview {
  tags: string[];
  experiment_id: string | null;
  /** The latest turn's status; null for a session without turns. */
  last_status: TurnRecordStatus | null;
}

export interface SessionPage {
  sessions: SessionPageItem[];
  /** Newest first (`updated_at`, then `id`); pass as `cursor` for the next page, null at the end. */
  next_cursor: string | null;
}
