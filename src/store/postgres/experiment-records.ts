import type pg from "pg";
import type { ExperimentListItem } from "../../domain/experiment.js";
import { decodeCursor, encodeCursor, type Page } from "../../domain/pagination.js";
import { parseInput } from "../../domain/validation.js";
import {
  ExperimentListQuery,
  type ExperimentRecords,
  ExperimentRecordsPage,
  type ExperimentScoringRows,
  type ScoringSession,
  type ScoringToolEnd,
} from "../experiment-records.js";
import { groupBySession, type SummaryRow, summaryPage } from "../sqlite/experiment-records.js";
import { hasUnansweredCall, scoringItems } from "../sqlite/experiment-scoring-rows.js";
import {
  type AuditRow,
  type MessageRow,
  type SessionRow,
  type TurnRow,
  toAuditRecord,
  toMessageRecord,
  toSessionRecord,
  toTurnRecord,
  toUsageCallRecord,
  type UsageRow,
} from "../sqlite/rows.js";
import { USAGE_COLUMNS } from "../sqlite/statements.js";
import { inTransaction, READ_SNAPSHOT } from "./transaction.js";

/**
 * Experiments read in bulk, as SQLite's experiment-records.ts and experiment-scoring-rows.ts
 * read them (the same records, built by the same functions): a slice of the experiment's
 * sessions (oldest first, `created_at` then insertion order), then the rows of all of them at
 * once, five queries a slice, in one snapshot. The slice's ids travel as one text[] parameter.
 */

const IN_SLICE = "session_id = ANY($1::text[])";

// The position as one row value, one index range on (experiment_id, created_at, seq) read in order
// up to the limit (an OR of two comparisons is no single range), as SQLite's slices. The first
// slice's NULL test is folded away when the statement is planned with its parameters.
const sessionsSql = (columns: string) => `
  SELECT seq AS position, created_at, ${columns} FROM sessions
  WHERE experiment_id = $1
    AND ($2::text IS NULL OR (created_at, seq) > ($2::text, $3::bigint))
  ORDER BY created_at, seq LIMIT $4`;

const RECORDS = {
  sessions: sessionsSql("id, title, updated_at, config_json"),
  turns: `SELECT session_id, turn_index, user_message, started_at, completed_at, wall_time_ms,
    status, runner FROM turns WHERE ${IN_SLICE} ORDER BY session_id, turn_index`,
  messages: `SELECT id, session_id, turn_index, role, content, name, tool_call_id,
    tool_calls_json, reasoning, refusal, created_at
    FROM messages WHERE ${IN_SLICE} ORDER BY session_id, id`,
  calls: `SELECT id, ${USAGE_COLUMNS.join(", ")} FROM usage_stats WHERE ${IN_SLICE}
    ORDER BY session_id, id`,
  toolEnds: `SELECT id, session_id, turn_index, round_index, event, details_json, created_at
    FROM audit_logs WHERE ${IN_SLICE} AND event = 'tool_end' ORDER BY session_id, id`,
};

/**
 * A part of the config as its JSON text, cut out by PostgreSQL (the whole config stays there).
 * `json`, not `jsonb`: its `->` hands back the stored text as written (key order, no spaces),
 * which is what SQLite's `->` gives and what readers compare.
 */
const part = (path: string) =>
  `(CASE WHEN agent_lab_json(config_json) IS NOT NULL THEN config_json::json ${path} END)::text`;

const SCORING = {
  sessions: sessionsSql(`id,
    ${part("-> 'experiment'")} AS experiment_json,
    ${part("-> 'experiment' -> 'repetition'")} AS repetition_json,
    ${part("-> 'experiment' -> 'run_key'")} AS run_key_json,
    ${part("-> 'chat_agent' -> 'model'")} AS chat_model_json`),
  turns: `SELECT session_id, turn_index, status, completed_at, wall_time_ms
    FROM turns WHERE ${IN_SLICE} ORDER BY session_id, turn_index`,
  // A superset of what facts.ts's isErrorReply may take for an error: the rest reads as empty.
  messages: `SELECT session_id, turn_index, role,
      CASE WHEN role = 'assistant' OR (strpos(content, '{') > 0
        AND (strpos(content, 'error') > 0 OR strpos(content, '\\') > 0))
        THEN content ELSE '' END AS content,
      tool_call_id,
      CASE WHEN role = 'assistant' THEN tool_calls_json ELSE '[]' END AS tool_calls_json, id
    FROM messages WHERE ${IN_SLICE} AND role IN ('assistant', 'tool') ORDER BY session_id, id`,
  calls: `SELECT session_id, id, turn_index, round_index, agent, call_kind, ttft_ms, prompt_tokens,
      completion_tokens, total_tokens, cached_tokens, reasoning_tokens, cache_write_tokens,
      event_id, used_fallback, cost_usd, cost_estimated_usd
    FROM usage_stats WHERE ${IN_SLICE} ORDER BY session_id, id`,
  toolEnds: `SELECT session_id, id, turn_index, event, details_json
    FROM audit_logs WHERE ${IN_SLICE} AND event = 'tool_end' ORDER BY session_id, id`,
  turnFailures: `SELECT session_id, id, turn_index, event, details_json
    FROM audit_logs WHERE ${IN_SLICE} AND event = 'turn_failed' ORDER BY session_id, id`,
};

type ScoringRow = Omit<ScoringSession, "tag_json"> & { experiment_json: string | null };

/** The experiment tag without its repetition and run key, as SQLite's json_remove writes it. */
function tagJson(row: ScoringRow): string | null {
  if (row.experiment_json === null) return null;
  const tag: unknown = JSON.parse(row.experiment_json);
  if (tag === null || typeof tag !== "object" || Array.isArray(tag)) return row.experiment_json;
  const { repetition: _repetition, run_key: _runKey, ...rest } = tag as Record<string, unknown>;
  return JSON.stringify(rest);
}

interface Positioned {
  id: string;
  position: number;
  created_at: string;
}

/** One slice of the experiment's sessions and what `withRows` reads for them, one snapshot. */
async function readSlice<Row extends Positioned, Slice>(
  pool: pg.Pool,
  experimentId: string,
  page: ExperimentRecordsPage,
  sessionsSqlText: string,
  withRows: (client: pg.ClientBase, rows: Row[], ids: string[]) => Promise<Slice>,
): Promise<Slice & { next_cursor: string | null }> {
  const { limit, cursor } = parseInput(ExperimentRecordsPage, page, "experimentRecords");
  const [afterAt, afterPosition] =
    cursor === undefined ? [null, null] : decodeCursor(cursor, ["string", "number"]);
  return inTransaction(
    pool,
    async (client) => {
      const rows = (
        await client.query<Row>(sessionsSqlText, [
          experimentId,
          afterAt,
          afterPosition,
          limit === undefined ? null : limit + 1,
        ])
      ).rows;
      const more = limit !== undefined && rows.length > limit;
      if (more) rows.length = limit;
      const last = rows.at(-1);
      const slice = await withRows(
        client,
        rows,
        rows.map((row) => row.id),
      );
      return {
        ...slice,
        next_cursor:
          more && last !== undefined ? encodeCursor([last.created_at, last.position]) : null,
      };
    },
    READ_SNAPSHOT,
  );
}

const objects = async <Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  sql: string,
  ids: string[],
) => (await client.query<Row>(sql, [ids])).rows;

/** Rows as arrays (columns in select order), as SQLite's raw rows the scoring mappers read. */
async function grouped<Row extends [string, ...unknown[]], Item>(
  client: pg.ClientBase,
  sql: string,
  ids: readonly string[],
  from: readonly string[],
  toItem: (row: Row) => Item,
): Promise<Map<string, Item[]>> {
  const result = await client.query<Row>({ text: sql, values: [from], rowMode: "array" });
  const map = new Map<string, Item[]>(ids.map((id) => [id, []]));
  for (const row of result.rows) map.get(row[0])?.push(toItem(row));
  return map;
}

export function readExperimentRecords(
  pool: pg.Pool,
  experimentId: string,
  page: ExperimentRecordsPage = {},
): Promise<ExperimentRecords> {
  return readSlice(
    pool,
    experimentId,
    page,
    RECORDS.sessions,
    async (client, rows: (SessionRow & Positioned)[], ids) => {
      const sessions = rows.map(toSessionRecord);
      const modes = new Map(sessions.map((session) => [session.id, session.tool_invocation_mode]));
      const turns = await objects<TurnRow & { session_id: string }>(client, RECORDS.turns, ids);
      const messages = await objects<MessageRow>(client, RECORDS.messages, ids);
      const calls = await objects<UsageRow & { session_id: string }>(client, RECORDS.calls, ids);
      const toolEnds = await objects<AuditRow>(client, RECORDS.toolEnds, ids);
      return {
        sessions,
        turns: groupBySession(ids, turns, ({ session_id: _session, ...turn }) =>
          toTurnRecord(turn),
        ),
        messages: groupBySession(ids, messages, toMessageRecord),
        calls: groupBySession(ids, calls, (row) =>
          toUsageCallRecord(row, modes.get(row.session_id) ?? "chat_agent_tools"),
        ),
        tool_ends: groupBySession(ids, toolEnds, toAuditRecord),
      };
    },
  );
}

export function experimentScoringRows(
  pool: pg.Pool,
  experimentId: string,
  page: ExperimentRecordsPage = {},
): Promise<ExperimentScoringRows> {
  return readSlice(
    pool,
    experimentId,
    page,
    SCORING.sessions,
    async (client, rows: (ScoringRow & Positioned)[], ids) => {
      const messages = await grouped(client, SCORING.messages, ids, ids, scoringItems.message);
      // Most runs have no call without a reply: their audit rows are not even looked at.
      const unanswered = ids.filter((id) => hasUnansweredCall(messages.get(id) ?? []));
      const turns = await grouped(client, SCORING.turns, ids, ids, scoringItems.turn);
      const failed = ids.filter((id) => turns.get(id)?.some((turn) => turn.status === "failed"));
      /** A statement's audit rows for only `some` of the slice's sessions; none read for none. */
      const auditOf = async (sql: string, some: string[]) =>
        some.length === 0
          ? new Map<string, ScoringToolEnd[]>(ids.map((id) => [id, []]))
          : await grouped(client, sql, ids, some, scoringItems.toolEnd);
      return {
        sessions: rows.map((row) => scoringItems.session({ ...row, tag_json: tagJson(row) })),
        turns,
        messages,
        calls: await grouped(client, SCORING.calls, ids, ids, scoringItems.call),
        tool_ends: await auditOf(SCORING.toolEnds, unanswered),
        turn_failures: await auditOf(SCORING.turnFailures, failed),
      };
    },
  );
}

/**
 * A page of experiments, latest `last_created_at` first, then id, from the summaries the
 * triggers keep (triggers.ts). An experiment whose sampled tag does not parse is left out.
 */
export async function listExperimentSummaries(
  pool: pg.Pool,
  query: ExperimentListQuery = {},
): Promise<Page<ExperimentListItem>> {
  const { limit, cursor, experiment } = parseInput(
    ExperimentListQuery,
    query,
    "listExperimentSummaries",
  );
  const [afterAt, afterId] =
    cursor === undefined ? [null, null] : decodeCursor(cursor, ["string", "string"]);
  const rows = (
    await pool.query<SummaryRow>(
      `SELECT id, sessions, first_created_at, last_created_at, last_updated_at, tag_json, revision
       FROM experiment_summaries
       WHERE sessions > 0 AND ($1::text IS NULL OR id = $1)
         AND ($2::text IS NULL OR last_created_at < $2
              OR (last_created_at = $2 AND id > $3::text))
       ORDER BY last_created_at DESC, id LIMIT $4`,
      [experiment ?? null, afterAt, afterId, limit + 1],
    )
  ).rows;
  return summaryPage(rows, limit);
}
