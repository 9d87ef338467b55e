import type pg from "pg";
import type { z } from "zod";
import { encodeCursor } from "../../domain/pagination.js";
import type { SessionPage, SessionQuery } from "../../domain/session-query.js";
import { type ListedPageRow, toSessionPageItem } from "../sqlite/rows.js";
import {
  likePattern,
  lowerBound,
  sessionCursorKey,
  upperBound,
} from "../sqlite/session-list-query.js";
import { SESSION_TOKENS } from "./queries.js";

type ParsedQuery = z.output<typeof SessionQuery>;

/**
 * The paged session list on PostgreSQL: newest first on `sessions_listed` (updated_at DESC,
 * id DESC), the page the rows after the cursor's (updated_at, id), each filter a condition on a
 * column with its own index (schema.ts): mode, either model, status and experiment are btree
 * indexes led by the filter and ordered like the list; a tag is the GIN index on `tags`.
 *
 * The title search is a case-insensitive substring (ILIKE), as SQLite's trigram search answers
 * it. Plain PostgreSQL has no trigram index (pg_trgm is an extension a database owner may not
 * have), so the search walks the list in order and stops at a full page: a common text is found
 * in the newest rows, a rare one reads every title once (a sequential scan of one column).
 */
export async function sessionListPage(
  pool: pg.Pool,
  query: ParsedQuery,
  titleCollation: string | null,
): Promise<SessionPage> {
  const { sql, params } = buildQuery(query, titleCollation);
  // One statement: the rows and their token totals come from one snapshot.
  const { rows } = await pool.query<ListedPageRow>(sql, params);
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  return {
    sessions: page.map((row) => toSessionPageItem(row, row.folded_tokens)),
    next_cursor:
      more && last !== undefined ? encodeCursor(["sessions", last.updated_at, last.id]) : null,
  };
}

/**
 * The collation whose case folding the title search uses, the first this server has: ILIKE folds
 * by the database's ctype, and under "C" (a common default) that is ASCII only, where SQLite's
 * search folds every script. Null: none of them, the database's own folding.
 */
const FOLDING_COLLATIONS = ["und-x-icu", "C.utf8", "C.UTF-8"];

export async function titleSearchCollation(
  client: pg.Pool | pg.ClientBase,
): Promise<string | null> {
  const { rows } = await client.query<{ collname: string }>(
    `SELECT collname FROM pg_collation
     WHERE collname = ANY($1) AND collencoding IN (-1, pg_char_to_encoding(current_setting('server_encoding')))`,
    [FOLDING_COLLATIONS],
  );
  const found = new Set(rows.map((row) => row.collname));
  return FOLDING_COLLATIONS.find((name) => found.has(name)) ?? null;
}

function buildQuery(
  query: ParsedQuery,
  titleCollation: string | null,
): { sql: string; params: unknown[] } {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const where = (condition: (next: () => string) => string, ...values: unknown[]) => {
    let index = params.length;
    params.push(...values);
    conditions.push(condition(() => `$${++index}`));
  };
  if (query.tag !== undefined) where((p) => `s.tags @> ARRAY[${p()}]::text[]`, query.tag);
  // One of FOLDING_COLLATIONS: a catalog name of the list above, quoted as an identifier.
  const title = titleCollation === null ? "s.title" : `(s.title COLLATE "${titleCollation}")`;
  if (query.q !== undefined)
    where((p) => `${title} ILIKE ${p()} ESCAPE '\\'`, likePattern(query.q));
  if (query.mode !== undefined) where((p) => `s.mode = ${p()}`, query.mode);
  if (query.model !== undefined) {
    where((p) => {
      const model = p();
      return `(s.chat_model = ${model} OR s.event_model = ${model})`;
    }, query.model);
  }
  if (query.status === "none") where(() => "s.last_status IS NULL");
  else if (query.status !== undefined) where((p) => `s.last_status = ${p()}`, query.status);
  if (query.experiment !== undefined) where((p) => `s.experiment_id = ${p()}`, query.experiment);
  if (query.experiments === "exclude") where(() => "s.experiment_id IS NULL");
  else if (query.experiments === "only") where(() => "s.experiment_id IS NOT NULL");
  if (query.updated_from !== undefined) {
    where((p) => `s.updated_at >= ${p()}`, lowerBound(query.updated_from));
  }
  if (query.updated_to !== undefined) {
    const bound = upperBound(query.updated_to);
    where((p) => `s.updated_at ${bound.inclusive ? "<=" : "<"} ${p()}`, bound.at);
  }
  if (query.cursor !== undefined) {
    where((p) => `(s.updated_at, s.id) < (${p()}, ${p()})`, ...sessionCursorKey(query.cursor));
  }
  params.push(query.limit + 1);
  return {
    sql: `SELECT s.id, s.title, s.created_at, s.updated_at, s.turn_count,
        ${SESSION_TOKENS} AS folded_tokens, s.mode, s.chat_model, s.event_model,
        s.experiment_id, s.last_status, array_to_json(s.tags)::text AS tags_json
      FROM sessions AS s
      ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}
      ORDER BY s.updated_at DESC, s.id DESC LIMIT $${params.length}`,
    params,
  };
}
