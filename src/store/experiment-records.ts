import type { MessageRecord, SessionRecord, TurnRecord } from "../domain/records.js";
import type { UsageCallRecord } from "../domain/usage.js";

/**
 * An experiment's stored runs, read in bulk for its report: the sessions tagged with the
 * experiment (oldest first, as `findSessionsByExperiment`) and, per session id, its turns,
 * messages and calls in their usual order.
 */
export interface ExperimentRecords {
  sessions: SessionRecord[];
  turns: Map<string, TurnRecord[]>;
  messages: Map<string, MessageRecord[]>;
  calls: Map<string, UsageCallRecord[]>;
}
