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
