import type Database from "better-sqlite3";
import { type ExperimentListItem, ExperimentTag } from "../../domain/experiment.js";
import { decodeCursor, encodeCursor, type Page } from "../../domain/pagination.js";
import { parseInput } from "../../domain/validation.js";
import {
  ExperimentListQuery,
  type ExperimentRecords,
  ExperimentRecordsPage,
} from "../experiment-records.js";
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
} from "./rows.js";
import { USAGE_COLUMNS } from "./statements.js";

/**
 * Experiments read in bulk, through the `experiment_id` generated column and its indexes: the
 * list from the summaries SQLite keeps (experiment-summaries.ts), and a report's rows a slice of sessions at a time, five queries a
 * slice (sessions, then the turns, messages, calls and tool ends of all of them at once).
 */

// The slice's session ids travel as one JSON array: one statement, whatever the slice's size.
export const IN_SLICE = "session_id IN (SELECT value FROM json_each(@ids))";

/**
 * A slice of the experiment's sessions (`columns` of each, after its list position). The position
 * is one row value, so the `(experiment_id, created_at)` index seeks to it: spelled as an OR, each
 * slice scanned the experiment's index entries from its first session, quadratic in its size.
 * The first slice starts before every position (see FIRST_POSITION).
 */
export function sessionsSql(columns: string): string {
  return `
    SELECT rowid AS position, created_at, ${columns} FROM sessions
    WHERE experiment_id = @experiment AND (created_at, rowid) > (@after_at, @after_position)
    ORDER BY created_at, rowid LIMIT @limit`;
}

/**
 * Before every session: `created_at` is NOT NULL with TEXT affinity, so each is a text (or a
 * blob, sorted after texts) no lower than '', and every rowid is above -Infinity.
 */
const FIRST_POSITION = ["", Number.NEGATIVE_INFINITY] as const;

const SQL = {
  sessions: sessionsSql("id, title, updated_at, config_json"),
  turns: `
    SELECT session_id, turn_index, user_message, started_at, completed_at, wall_time_ms, status,
           runner
    FROM turns WHERE ${IN_SLICE} ORDER BY session_id, turn_index`,
  messages: `
    SELECT id, session_id, turn_index, role, content, name, tool_call_id, tool_calls_json,
           reasoning, refusal, created_at
    FROM messages WHERE ${IN_SLICE} ORDER BY session_id, id`,
  calls: `
    SELECT id, ${USAGE_COLUMNS.join(", ")} FROM usage_stats WHERE ${IN_SLICE}
    ORDER BY session_id, id`,
  toolEnds: `
    SELECT id, session_id, turn_index, round_index, event, details_json, created_at
    FROM audit_logs WHERE ${IN_SLICE} AND event = 'tool_end' ORDER BY session_id, id`,
  // One row an experiment, kept by triggers (experiment-summaries.ts), read in list order.
  summaries: `
    SELECT id, sessions, first_created_at, last_created_at, last_updated_at, tag_json, revision
    FROM experiment_summaries
    WHERE sessions > 0 AND (@experiment IS NULL OR id = @experiment)
      AND (@after_at IS NULL OR last_created_at < @after_at
           OR (last_created_at = @after_at AND id > @after_id))
    ORDER BY last_created_at DESC, id LIMIT @limit`,
} as const;

/** A statement, and its rows as objects made from SQLite's arrays (see rowsOf). */
export interface Reader {
  statement: Database.Statement;
  toObject: (values: unknown[]) => unknown;
}
export type Readers<Names extends string> = { [Name in Names]: Reader };
const prepared = new WeakMap<Database.Database, Map<object, unknown>>();

/**
 * Builds a row's object from its array as one literal of the statement's columns. A report reads
 * hundreds of thousands of rows; better-sqlite3 makes each object key by key through the V8 API,
 * which costs twice the read itself on the wide usage rows (same object, half the time this way).
 */
function objectMaker(statement: Database.Statement): (values: unknown[]) => unknown {
  const fields = statement
    .columns()
    .map((column, index) => `${JSON.stringify(column.name)}: values[${index}]`);
  return new Function("values", `return { ${fields.join(", ")} };`) as (
    values: unknown[],
  ) => unknown;
}

/** The statements of `sqls` on `db`, prepared once per connection. */
export function readersOf<Names extends string>(
  db: Database.Database,
  sqls: Record<Names, string>,
): Readers<Names> {
  let connection = prepared.get(db);
  if (connection === undefined) {
    connection = new Map();
    prepared.set(db, connection);
  }
  let known = connection.get(sqls) as Readers<Names> | undefined;
  if (known === undefined) {
    known = Object.fromEntries(
      Object.entries<string>(sqls).map(([name, sql]) => {
        const statement = db.prepare(sql);
        return [name, { statement, toObject: objectMaker(statement) }];
      }),
    ) as Readers<Names>;
    connection.set(sqls, known);
  }
  return known;
}

const statements = (db: Database.Database) => readersOf(db, SQL);

/**
 * The statement's rows, as objects keyed by column (see objectMaker), each made as it is consumed:
 * a slice's rows then die young, rather than being held twice over until the slice is mapped.
 */
export function* rowsOf<Row>(reader: Reader, parameters: Record<string, unknown>): Generator<Row> {
  const rows = reader.statement.raw(true).all(parameters) as unknown[][];
  for (const values of rows) yield reader.toObject(values) as Row;
}

export function groupBySession<Row extends { session_id: string }, Item>(
  ids: readonly string[],
  rows: Iterable<Row>,
  toItem: (row: Row) => Item,
): Map<string, Item[]> {
  const grouped = new Map<string, Item[]>(ids.map((id) => [id, []]));
  for (const row of rows) grouped.get(row.session_id)?.push(toItem(row));
  return grouped;
}

/** A session row of a slice: where it stands in the list, for the next slice's cursor. */
interface Positioned {
  position: number;
  created_at: string;
}

/**
 * One slice of the experiment's sessions (`sessions`, see sessionsSql) and what `withRows` makes
 * of them and their ids, in one read transaction (the slice's rows agree with its sessions).
 */
export function readExperimentSlice<Row extends Positioned & { id: string }, Slice>(
  db: Database.Database,
  experimentId: string,
  page: ExperimentRecordsPage,
  sessions: Reader,
  withRows: (rows: Row[], ids: { ids: string }) => Slice,
): Slice & { next_cursor: string | null } {
  const { limit, cursor } = parseInput(ExperimentRecordsPage, page, "experimentRecords");
  const [afterAt, afterPosition] =
    cursor === undefined ? FIRST_POSITION : decodeCursor(cursor, ["string", "number"]);
  return db.transaction(() => {
    const rows = Array.from(
      rowsOf<Row>(sessions, {
        experiment: experimentId,
        after_at: afterAt,
        after_position: afterPosition,
        limit: limit === undefined ? -1 : limit + 1,
      }),
    );
    const more = limit !== undefined && rows.length > limit;
    if (more) rows.length = limit;
    const last = rows.at(-1);
    return {
      ...withRows(rows, { ids: JSON.stringify(rows.map((row) => row.id)) }),
      next_cursor:
        more && last !== undefined ? encodeCursor([last.created_at, last.position]) : null,
    };
  })();
}

/** An experiment's runs and their rows, in five queries per slice (see ExperimentRecords). */
export function readExperimentRecords(
  db: Database.Database,
  experimentId: string,
  page: ExperimentRecordsPage = {},
): ExperimentRecords {
  const sql = statements(db);
  return readExperimentSlice(
    db,
    experimentId,
    page,
    sql.sessions,
    (rows: (SessionRow & Positioned)[], slice) => {
      const sessions = rows.map(toSessionRecord);
      const ids = sessions.map((session) => session.id);
      const modes = new Map(sessions.map((session) => [session.id, session.tool_invocation_mode]));
      return {
        sessions,
        turns: groupBySession(
          ids,
          rowsOf<TurnRow & { session_id: string }>(sql.turns, slice),
          // The per-session record has no session_id; named, not spread (a row a turn).
          (row) =>
            toTurnRecord({
              turn_index: row.turn_index,
              user_message: row.user_message,
              started_at: row.started_at,
              completed_at: row.completed_at,
              wall_time_ms: row.wall_time_ms,
              status: row.status,
              runner: row.runner,
            }),
        ),
        messages: groupBySession(ids, rowsOf<MessageRow>(sql.messages, slice), toMessageRecord),
        calls: groupBySession(
          ids,
          rowsOf<UsageRow & { session_id: string }>(sql.calls, slice),
          // toUsageCallRecord picks its fields by name: the extra session_id is left behind.
          (row) => toUsageCallRecord(row, modes.get(row.session_id) ?? "chat_agent_tools"),
        ),
        tool_ends: groupBySession(ids, rowsOf<AuditRow>(sql.toolEnds, slice), toAuditRecord),
      };
    },
  );
}

export interface SummaryRow {
  id: unknown;
  sessions: number;
  first_created_at: string;
  last_created_at: string;
  last_updated_at: string;
  tag_json: string | null;
  revision: number;
}

/** The suite its tag names, or null when the experiment's sampled tag is not one. */
function suiteOf(tagJson: string | null): string | null {
  if (tagJson === null) return null;
  try {
    const tag = ExperimentTag.safeParse(JSON.parse(tagJson));
    return tag.success ? tag.data.suite : null;
  } catch {
    return null;
  }
}

/**
 * A page of experiments, latest `last_created_at` first, then id. An experiment whose sampled
 * tag does not parse is no experiment (left out, the page may come out short).
 */
export function listExperimentSummaries(
  db: Database.Database,
  query: ExperimentListQuery = {},
): Page<ExperimentListItem> {
  const { limit, cursor, experiment } = parseInput(
    ExperimentListQuery,
    query,
    "listExperimentSummaries",
  );
  const [afterAt, afterId] =
    cursor === undefined ? [null, null] : decodeCursor(cursor, ["string", "string"]);
  const rows = Array.from(
    rowsOf<SummaryRow>(statements(db).summaries, {
      experiment: experiment ?? null,
      after_at: afterAt,
      after_id: afterId,
      limit: limit + 1,
    }),
  );
  return summaryPage(rows, limit);
}

/**
 * The page of `rows` (read one past `limit`): experiments whose sampled tag does not parse are
 * left out (the page may come out short), the cursor is the last row's (last_created_at, id).
 */
export function summaryPage(rows: SummaryRow[], limit: number): Page<ExperimentListItem> {
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const items: ExperimentListItem[] = [];
  for (const row of rows) {
    const suite = suiteOf(row.tag_json);
    if (suite === null) continue;
    items.push({
      id: String(row.id),
      suite,
      sessions: row.sessions,
      first_created_at: row.first_created_at,
      last_created_at: row.last_created_at,
      last_updated_at: row.last_updated_at,
      revision: row.revision,
    });
  }
  const last = rows.at(-1);
  return {
    items,
    next_cursor:
      more && last !== undefined ? encodeCursor([last.last_created_at, String(last.id)]) : null,
  };
}
