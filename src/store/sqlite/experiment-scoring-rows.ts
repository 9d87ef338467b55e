import type Database from "better-sqlite3";
import { z } from "zod";
import { ToolCallEvent } from "../../domain/events.js";
import type { MessageRole } from "../../domain/messages.js";
import type { TurnRecordStatus } from "../../domain/records.js";
import type { AgentRole, CallKind } from "../../domain/usage.js";
import { parseJsonText } from "../../domain/validation.js";
import type {
  ExperimentRecordsPage,
  ExperimentScoringRows,
  ScoringMessage,
  ScoringSession,
} from "../experiment-records.js";
import {
  groupBySession,
  IN_SLICE,
  readExperimentSlice,
  readersOf,
  rowsOf,
  sessionsSql,
} from "./experiment-records.js";

/**
 * An experiment's runs as its report scores them (see ExperimentScoringRows): the slices of
 * readExperimentRecords, five queries each, reading only the columns scoring and pricing use.
 * The config's parts are cut out by SQLite, so the whole config text never reaches JavaScript.
 */

const SQL = {
  sessions: sessionsSql(`id,
    json_remove(config_json -> '$.experiment', '$.repetition', '$.run_key') AS tag_json,
    config_json -> '$.experiment.repetition' AS repetition_json,
    config_json -> '$.experiment.run_key' AS run_key_json,
    config_json -> '$.chat_agent' AS chat_agent_json,
    config_json -> '$.event_agent' AS event_agent_json,
    config_json -> '$.prices' AS prices_json`),
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
} as const;

const JsonObject = z.record(z.string(), z.unknown());
const ToolCalls = z.array(ToolCallEvent);

interface TurnRow {
  session_id: string;
  turn_index: number;
  status: string | null;
  completed_at: string | null;
  wall_time_ms: number | null;
}
interface MessageRow {
  session_id: string;
  turn_index: number;
  role: string;
  content: string;
  tool_call_id: string | null;
  tool_calls_json: string;
  id: number;
}
interface CallRow {
  session_id: string;
  id: number;
  turn_index: number;
  round_index: number;
  agent: string;
  call_kind: string;
  ttft_ms: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cache_write_tokens: number;
  event_id: string | null;
  used_fallback: number;
  cost_usd: number | null;
  cost_estimated_usd: number | null;
}
interface ToolEndRow {
  session_id: string;
  id: number;
  turn_index: number | null;
  event: string;
  details_json: string;
}

/** A JSON object's value, as rows.ts reads one (a plain parse; the schema names a problem). */
function objectOf(text: string, where: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (
      value !== null &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      !Object.hasOwn(value, "__proto__")
    ) {
      return value as Record<string, unknown>;
    }
  } catch {
    // parseJsonText names the problem.
  }
  return parseJsonText(JsonObject, text, where);
}

/** Whether an assistant's tool call has no reply in its turn (its outcome is then audited). */
function hasUnansweredCall(messages: readonly ScoringMessage[]): boolean {
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
      const messages = groupBySession(ids, rowsOf<MessageRow>(sql.messages, slice), (row) => ({
        turn_index: row.turn_index,
        role: row.role as MessageRole,
        content: row.content,
        tool_call_id: row.tool_call_id,
        tool_calls:
          row.tool_calls_json === "[]"
            ? []
            : parseJsonText(ToolCalls, row.tool_calls_json, `message ${row.id} tool_calls`),
      }));
      // Most runs have no call without a reply: their audit rows are not even looked at.
      const unanswered = ids.filter((id) => hasUnansweredCall(messages.get(id) ?? []));
      return {
        sessions: sessions.map((row) => ({
          id: row.id,
          tag_json: row.tag_json,
          repetition_json: row.repetition_json,
          run_key_json: row.run_key_json,
          chat_agent_json: row.chat_agent_json,
          event_agent_json: row.event_agent_json,
          prices_json: row.prices_json,
        })),
        turns: groupBySession(ids, rowsOf<TurnRow>(sql.turns, slice), (row) => ({
          turn_index: row.turn_index,
          // As toTurnRecord: legacy rows predate the status column.
          status: (row.status ??
            (row.completed_at === null ? "running" : "completed")) as TurnRecordStatus,
          wall_time_ms: row.wall_time_ms,
        })),
        messages,
        calls: groupBySession(ids, rowsOf<CallRow>(sql.calls, slice), (row) => ({
          id: row.id,
          turn_index: row.turn_index,
          round_index: row.round_index,
          agent: row.agent as AgentRole,
          call_kind: row.call_kind as CallKind,
          ttft_ms: row.ttft_ms,
          prompt_tokens: row.prompt_tokens,
          completion_tokens: row.completion_tokens,
          total_tokens: row.total_tokens,
          cached_tokens: row.cached_tokens,
          reasoning_tokens: row.reasoning_tokens,
          cache_write_tokens: row.cache_write_tokens,
          event_id: row.event_id,
          used_fallback: row.used_fallback !== 0,
          cost_usd: row.cost_usd,
          cost_estimated_usd: row.cost_estimated_usd,
        })),
        tool_ends: groupBySession(
          ids,
          unanswered.length === 0
            ? []
            : rowsOf<ToolEndRow>(sql.toolEnds, { ids: JSON.stringify(unanswered) }),
          (row) => ({
            turn_index: row.turn_index,
            event: row.event,
            details: objectOf(row.details_json, `audit log ${row.id} details`),
          }),
        ),
      };
    },
  );
}
