import { z } from "zod";
import { PageRequest } from "../domain/pagination.js";
import type { AuditRecord, MessageRecord, SessionRecord, TurnRecord } from "../domain/records.js";
import type { UsageCallRecord } from "../domain/usage.js";

/**
 * An experiment's stored runs, read in bulk for its report: the sessions tagged with the
 * experiment (oldest first, as `findSessionsByExperiment`) and, per session id, its turns,
 * messages, calls and `tool_end` audit rows in their usual order. Every map has an entry (maybe
 * empty) for every session listed.
 */
export interface ExperimentRecords {
  sessions: SessionRecord[];
  turns: Map<string, TurnRecord[]>;
  messages: Map<string, MessageRecord[]>;
  calls: Map<string, UsageCallRecord[]>;
  /** Only the `tool_end` rows: scoring reads a tool's outcome there when its reply is missing. */
  tool_ends: Map<string, AuditRecord[]>;
  /** With a page limit: pass as `cursor` for the next sessions; null once the last is read. */
  next_cursor: string | null;
}

/**
 * An experiment's stored runs as its report scores them (`experimentScoringRows`): the columns
 * scoring and pricing read and nothing else, so a report of tens of thousands of runs neither
 * reads nor allocates what it then drops (user prompts, most tool output, timestamps, payloads).
 */
export interface ScoringSession {
  id: string;
  /**
   * The config's `experiment` tag as JSON text, without its `repetition` and `run_key`, and those
   * two as JSON texts; null when absent. The runs of one cell and scenario share the rest, so a
   * reader can validate each distinct one once.
   */
  tag_json: string | null;
  repetition_json: string | null;
  run_key_json: string | null;
  /**
   * The config's `chat_agent.model` as JSON text, null when absent. (A call without a recorded
   * price is priced from the whole config: rare, so it is read then, by the session.)
   */
  chat_model_json: string | null;
}
export type ScoringTurn = Pick<TurnRecord, "turn_index" | "status" | "wall_time_ms">;
/**
 * Assistant messages and tool replies only. A reply's content is kept only when it may be an
 * error report (it has a `{` and names `error` or has an escape), else it reads as empty: a
 * report asks of a reply only whether it is one (facts.ts).
 */
export type ScoringMessage = Pick<
  MessageRecord,
  "turn_index" | "role" | "content" | "tool_call_id" | "tool_calls"
>;
export type ScoringCall = Pick<
  UsageCallRecord,
  | "id"
  | "turn_index"
  | "round_index"
  | "agent"
  | "call_kind"
  | "ttft_ms"
  | "prompt_tokens"
  | "completion_tokens"
  | "total_tokens"
  | "cached_tokens"
  | "reasoning_tokens"
  | "cache_write_tokens"
  | "event_id"
  | "used_fallback"
  | "cost_usd"
  | "cost_estimated_usd"
>;
export type ScoringToolEnd = Pick<AuditRecord, "turn_index" | "event" | "details">;

/** A slice of an experiment's runs (as ExperimentRecords, same order and paging), lean. */
export interface ExperimentScoringRows {
  sessions: ScoringSession[];
  turns: Map<string, ScoringTurn[]>;
  messages: Map<string, ScoringMessage[]>;
  calls: Map<string, ScoringCall[]>;
  /**
   * A session's `tool_end` rows when some assistant tool call of it has no tool reply in its turn
   * (scoring reads the outcome of such a call there), else none: a run's audit rows are many.
   */
  tool_ends: Map<string, ScoringToolEnd[]>;
  /**
   * A session's `turn_failed` rows (a failed turn's code and message) when one of its turns
   * failed, else none: a report says why a run failed, not only that it did.
   */
  turn_failures: Map<string, ScoringToolEnd[]>;
  next_cursor: string | null;
}

/** The most sessions one slice of `experimentRecords` may hold (its rows are held at once). */
export const MAX_EXPERIMENT_RECORDS_LIMIT = 10_000;

/**
 * A slice of an experiment's sessions (oldest first) with all their rows: a report reads an
 * experiment of any size a few thousand runs at a time, so its memory does not grow with it.
 * Without a limit, every session at once.
 */
export const ExperimentRecordsPage = z.strictObject({
  limit: z.number().int().min(1).max(MAX_EXPERIMENT_RECORDS_LIMIT).optional(),
  cursor: z.string().max(1024).optional(),
});
export type ExperimentRecordsPage = z.input<typeof ExperimentRecordsPage>;

/** A page of the experiment list; `experiment` narrows it to that one id (its staleness stamp). */
export const ExperimentListQuery = PageRequest.extend({
  experiment: z.string().min(1).max(200).optional(),
});
export type ExperimentListQuery = z.input<typeof ExperimentListQuery>;
