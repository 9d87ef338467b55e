import type Database from "better-sqlite3";
import type { MessageRole } from "../../domain/messages.js";
import type { TurnRecordStatus } from "../../domain/records.js";
import type { AgentRole, CallKind } from "../../domain/usage.js";
import type {
  ExperimentRecordsPage,
  ExperimentScoringRows,
  ScoringMessage,
  ScoringSession,
  ScoringToolEnd,
} from "../experiment-records.js";
import { parseStoredToolCalls } from "../stored-tool-calls.js";
import {
  IN_SLICE,
  type Reader,
  readExperimentSlice,
  readersOf,
  sessionsSql,
} from "./experiment-records.js";
import { storedObject } from "./rows.js";

/**
 * An experiment's runs as its report scores them (see ExperimentScoringRows): the slices of
 * readExperimentRecords, five queries each, reading only the columns scoring and pricing use.
 * The config's parts are cut out by SQLite, so the whole config text never reaches JavaScript.
 */

const SQL = {
  // The tag cut out as JSONB and made text once (as text, `->` and json_remove each wrote it).
  sessions: sessionsSql(`id,
    json(jsonb_remove(jsonb_extract(config_json, '$.experiment'), '$.repetition', '$.run_key'))
      AS tag_json,
    config_json -> '$.experiment.repetition' AS repetition_json,
    config_json -> '$.experiment.run_key' AS run_key_json,
    config_json -> '$.chat_agent.model' AS chat_model_json`),
  turns: `
    SELECT session_id, turn_index, status, completed_at, wall_time_ms
    FROM turns WHERE ${IN_SLICE} ORDER BY session_id, turn_index`,
  // A superset of what facts.ts's isErrorReply may take for an error: the rest reads as empty.
  messages: `
    SELECT session_id, turn_index, role,
           CASE WHEN role = 'assistant' OR (instr(content, '{') > 0
                AND (instr(content, 'error') > 0 OR instr(content, '\\') > 0))
                THEN content ELSE '' END AS content,
           tool_call_id,
           CASE WHEN role = 'assistant' THEN tool_calls_json ELSE '[]' END AS tool_calls_json,
           id
    FROM messages WHERE ${IN_SLICE} AND role IN ('assistant', 'tool') ORDER BY session_id, id`,
  calls: `
    SELECT session_id, id, turn_index, round_index, agent, call_kind, ttft_ms, prompt_tokens,
           completion_tokens, total_tokens, cached_tokens, reasoning_tokens, cache_write_tokens,
           event_id, used_fallback, cost_usd, cost_estimated_usd
    FROM usage_stats WHERE ${IN_SLICE} ORDER BY session_id, id`,
  toolEnds: `
    SELECT session_id, id, turn_index, event, details_json
    FROM audit_logs WHERE ${IN_SLICE} AND event = 'tool_end' ORDER BY session_id, id`,
  turnFailures: `
    SELECT session_id, id, turn_index, event, details_json
    FROM audit_logs WHERE ${IN_SLICE} AND event = 'turn_failed' ORDER BY session_id, id`,
} as const;

// Each statement's row as SQLite's array (its columns in the order selected above): a report
// reads hundreds of thousands of them, each made into its record at once, no object between.
export type TurnRow = [string, number, string | null, string | null, number | null];
export type MessageRow = [string, number, string, string, string | null, string, number];
export type CallRow = [
  string,
  number,
  number,
  number,
  string,
  string,
  number | null,
  number,
  number,
  number,
  number,
  number,
  number,
  string | null,
  number,
  number | null,
  number | null,
];
export type ToolEndRow = [string, number, number | null, string, string];

/** The statement's rows, grouped by their session (the first column) in the slice's order. */
function groupRows<Row extends [string, ...unknown[]], Item>(
  ids: readonly string[],
  reader: Reader,
  parameters: Record<string, unknown>,
  toItem: (row: Row) => Item,
): Map<string, Item[]> {
  const grouped = new Map<string, Item[]>(ids.map((id) => [id, []]));
  const rows = reader.statement.raw(true).all(parameters) as Row[];
  for (const row of rows) grouped.get(row[0])?.push(toItem(row));
  return grouped;
}

/** Whether an assistant's tool call has no reply in its turn (its outcome is then audited). */
export function hasUnansweredCall(messages: readonly ScoringMessage[]): boolean {
  const replies = new Set<string>();
  for (const message of messages) {
    if (message.role === "tool" && message.tool_call_id !== null) {
      replies.add(`${message.turn_index}\n${message.tool_call_id}`);
    }
  }
  return messages.some(
    (message) =>
      message.role === "assistant" &&
      message.tool_calls.some((call) => !replies.has(`${message.turn_index}\n${call.id}`)),
  );
}

/** Each statement's array row as its scoring record (shared with the PostgreSQL backend). */
export const scoringItems = {
  message: (row: MessageRow): ScoringMessage => ({
    turn_index: row[1],
    role: row[2] as MessageRole,
    content: row[3],
    tool_call_id: row[4],
    tool_calls: parseStoredToolCalls(row[5], `message ${row[6]} tool_calls`),
  }),
  turn: (row: TurnRow) => ({
    turn_index: row[1],
    // As toTurnRecord: legacy rows predate the status column.
    status: (row[2] ?? (row[3] === null ? "running" : "completed")) as TurnRecordStatus,
    wall_time_ms: row[4],
  }),
  call: (row: CallRow) => ({
    id: row[1],
    turn_index: row[2],
    round_index: row[3],
    agent: row[4] as AgentRole,
    call_kind: row[5] as CallKind,
    ttft_ms: row[6],
    prompt_tokens: row[7],
    completion_tokens: row[8],
    total_tokens: row[9],
    cached_tokens: row[10],
    reasoning_tokens: row[11],
    cache_write_tokens: row[12],
    event_id: row[13],
    used_fallback: row[14] !== 0,
    cost_usd: row[15],
    cost_estimated_usd: row[16],
  }),
  toolEnd: (row: ToolEndRow) => ({
    turn_index: row[2],
    event: row[3],
    details: storedObject(row[4], `audit log ${row[1]} details`),
  }),
  session: (row: ScoringSession): ScoringSession => ({
    id: row.id,
    tag_json: row.tag_json,
    repetition_json: row.repetition_json,
    run_key_json: row.run_key_json,
    chat_model_json: row.chat_model_json,
  }),
};

export function readExperimentScoringRows(
  db: Database.Database,
  experimentId: string,
  page: ExperimentRecordsPage = {},
): ExperimentScoringRows {
  const sql = readersOf(db, SQL);
  return readExperimentSlice(
    db,
    experimentId,
    page,
    sql.sessions,
    (sessions: (ScoringSession & { position: number; created_at: string })[], slice) => {
      const ids = sessions.map((session) => session.id);
      const messages = groupRows(ids, sql.messages, slice, scoringItems.message);
      // Most runs have no call without a reply: their audit rows are not even looked at.
      const unanswered = ids.filter((id) => hasUnansweredCall(messages.get(id) ?? []));
      const turns = groupRows(ids, sql.turns, slice, scoringItems.turn);
      const failed = ids.filter((id) => turns.get(id)?.some((turn) => turn.status === "failed"));
      /** A statement's audit rows for only `some` of the slice's sessions; none read for none. */
      const auditOf = (reader: Reader, some: readonly string[]) =>
        some.length === 0
          ? new Map<string, ScoringToolEnd[]>(ids.map((id) => [id, []]))
          : groupRows(ids, reader, { ids: JSON.stringify(some) }, scoringItems.toolEnd);
      return {
        sessions: sessions.map(scoringItems.session),
        turns,
        messages,
        calls: groupRows(ids, sql.calls, slice, scoringItems.call),
        tool_ends: auditOf(sql.toolEnds, unanswered),
        turn_failures: auditOf(sql.turnFailures, failed),
      };
    },
  );
}
