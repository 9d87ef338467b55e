import type Database from "better-sqlite3";
import type { z } from "zod";
import { InvalidInputError } from "../../domain/errors.js";
import { decodeCursor, encodeCursor } from "../../domain/pagination.js";
import type { SessionPage, SessionQuery } from "../../domain/session-query.js";
import { type ListedPageRow, toSessionPageItem } from "./rows.js";
import { TokenFold } from "./token-fold.js";

type ParsedQuery = z.output<typeof SessionQuery>;

/** The shortest title search the trigram index answers; shorter ones scan titles (DESIGN.md). */
const TRIGRAM = 3;
/** How many of the newest candidate rows a title search reads before it asks the index. */
const PROBE_ROWS = 2_000;

/**
 * How a title search is answered, tried in order: "recent" matches the newest PROBE_ROWS
 * candidates with LIKE (a common text fills the page there, where the trigram index would list
 * thousands of matches to sort), "index" asks the trigram index (cost grows with the matches),
 * "scan" is LIKE over the list in order (1-2 characters, which trigrams cannot answer). LIKE folds
 * ASCII case only, so a text with other characters goes to the index, which folds all of them, or
 * when shorter, is scanned with `folded_has` ("foldedScan"), which folds them in JavaScript.
 */
type TitlePlan = "none" | "recent" | "index" | "scan" | "foldedScan";

function titlePlans(query: ParsedQuery): TitlePlan[] {
  if (query.q === undefined) return ["none"];
  const ascii = /^[\x20-\x7e]*$/.test(query.q);
  if ([...query.q].length < TRIGRAM) return [ascii ? "scan" : "foldedScan"];
  // The model filter's two arms each read at most a page already; the index answers it directly.
  return ascii && query.model === undefined ? ["recent", "index"] : ["index"];
}

/** Case folded as the trigram index folds it (Unicode, diacritics kept). */
const folded = (text: string) => text.toLowerCase();

export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, "\\$&")}%`;

/**
 * The paged session list: newest first on the `sessions_listed` order (updated_at DESC, id DESC),
 * each filter a condition on a schema-v4 column or table with its own index, the page the rows
 * after the cursor's (updated_at, id). Statements are prepared once per combination of filters.
 */
export class SessionListQuery {
  private readonly tokenFold: TokenFold;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.tokenFold = new TokenFold(db);
    db.function("folded_has", { deterministic: true }, (title, search) =>
      typeof title === "string" && typeof search === "string" && folded(title).includes(search)
        ? 1
        : 0,
    );
  }

  page(query: ParsedQuery): SessionPage {
    const plans = titlePlans(query);
    this.tokenFold.foldIfLarge();
    const { rows, tail } = this.db.transaction(() => {
      let rows: ListedPageRow[] = [];
      for (const plan of plans) {
        const { sql, params } = buildQuery(query, plan);
        rows = this.prepared(sql).all(...params) as ListedPageRow[];
        // A probe of the newest rows that filled the page is the answer; otherwise the index is.
        if (plan !== "recent" || rows.length > query.limit) break;
      }
      return { tail: this.tokenFold.tail(), rows };
    })();
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    const last = page.at(-1);
    return {
      sessions: page.map((row) =>
        toSessionPageItem(row, row.folded_tokens + (tail.get(row.id) ?? 0)),
      ),
      next_cursor:
        more && last !== undefined ? encodeCursor(["sessions", last.updated_at, last.id]) : null,
    };
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

interface Built {
  sql: string;
  params: unknown[];
}

/**
 * The statement of one page. With a tag, the rows come from session_tags' (tag, updated_at, id)
 * index, which holds the list order; otherwise from sessions' own indexes. A model filter is
 * either agent's model: two ordered arms (chat model, event model), each at most one page long,
 * merged, so neither a sort of every match nor a scan of the whole list.
 */
function buildQuery(query: ParsedQuery, titlePlan: TitlePlan): Built {
  const tagged = query.tag !== undefined;
  const [updatedAt, id] = tagged ? ["t.updated_at", "t.session_id"] : ["s.updated_at", "s.id"];
  const from = tagged
    ? "session_tags AS t JOIN sessions AS s ON s.id = t.session_id"
    : "sessions AS s";
  const order = `ORDER BY ${updatedAt} DESC, ${id} DESC`;
  const conditions: string[] = [];
  const params: unknown[] = [];
  const where = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (query.tag !== undefined) where("t.tag = ?", query.tag);
  const q = query.q ?? "";
  if (titlePlan === "index") {
    where(
      `s.id IN (SELECT k.session_id FROM sessions_fts JOIN session_search AS k
        ON k.key = sessions_fts.rowid WHERE sessions_fts MATCH ?)`,
      `"${q.replaceAll('"', '""')}"`,
    );
  } else if (titlePlan === "scan") {
    where("s.title LIKE ? ESCAPE '\\'", likePattern(q));
  } else if (titlePlan === "foldedScan") {
    where("folded_has(s.title, ?)", folded(q));
  }
  if (query.mode !== undefined) where("s.mode = ?", query.mode);
  if (query.status === "none") where("s.last_status IS NULL");
  else if (query.status !== undefined) where("s.last_status = ?", query.status);
  if (query.experiment !== undefined) where("s.experiment_id = ?", query.experiment);
  // `IS NULL` reads the (experiment_id, updated_at, id) index in list order.
  if (query.experiments === "exclude") where("s.experiment_id IS NULL");
  else if (query.experiments === "only") where("s.experiment_id IS NOT NULL");
  if (query.updated_from !== undefined) {
    where(`${updatedAt} >= ?`, lowerBound(query.updated_from));
  }
  if (query.updated_to !== undefined) {
    const bound = upperBound(query.updated_to);
    where(`${updatedAt} ${bound.inclusive ? "<=" : "<"} ?`, bound.at);
  }
  if (query.cursor !== undefined) {
    where(`(${updatedAt}, ${id}) < (?, ?)`, ...sessionCursorKey(query.cursor));
  }
  const limit = query.limit + 1;
  const columns = `s.id, s.title, s.created_at, s.updated_at, s.turn_count, s.folded_tokens,
    s.mode, s.chat_model, s.event_model, s.experiment_id, s.last_status,
    (SELECT json_group_array(tag) FROM
      (SELECT tag FROM session_tags WHERE session_id = s.id ORDER BY tag)) AS tags_json`;
  const whereOf = (extra: string[]) => {
    const all = [...conditions, ...extra];
    return all.length > 0 ? `WHERE ${all.join(" AND ")}` : "";
  };
  if (titlePlan === "recent") {
    return {
      sql: `SELECT ${columns} FROM sessions AS s WHERE s.rowid IN (
          SELECT s.rowid FROM ${from} ${whereOf([])} ${order} LIMIT ${PROBE_ROWS})
        AND s.title LIKE ? ESCAPE '\\' ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`,
      params: [...params, likePattern(q), limit],
    };
  }
  if (query.model === undefined) {
    return {
      sql: `SELECT ${columns} FROM ${from} ${whereOf([])} ${order} LIMIT ?`,
      params: [...params, limit],
    };
  }
  const arm = (column: string) =>
    `SELECT * FROM (SELECT s.rowid AS row FROM ${from} ${whereOf([`s.${column} = ?`])} ${order} LIMIT ?)`;
  return {
    sql: `SELECT ${columns} FROM sessions AS s WHERE s.rowid IN (
        ${arm("chat_model")} UNION ${arm("event_model")})
      ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`,
    params: [...params, query.model, limit, ...params, query.model, limit, limit],
  };
}

export function sessionCursorKey(cursor: string): [string, string] {
  const [name, updatedAt, id] = decodeCursor(cursor, ["string", "string", "string"]) as string[];
  if (name !== "sessions" || updatedAt === undefined || id === undefined) {
    throw new InvalidInputError(
      "cursor: not a cursor of the session list (pass the next_cursor of the previous page unchanged)",
    );
  }
  return [updatedAt, id];
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The last time a stored `toISOString()` text can hold with four year digits. */
const LAST_STORED_TIME = "9999-12-31T23:59:59.999Z";

/**
 * Stored times are `toISOString()` text (UTC, milliseconds), so bounds are compared as such. Past
 * year 9999 that text is `+010000-…`, which sorts before every stored time: such a bound is the
 * last time the text can hold instead (`updated_to=9999-12-31` found nothing).
 */
function storedTime(date: Date): string {
  const text = date.toISOString();
  return text.startsWith("+") ? LAST_STORED_TIME : text;
}

/** Digits past the millisecond in a time's fraction (`…:00.0001Z` has "1"), else "". */
const SUB_MILLISECOND = /T[\d:]+\.\d{3}(\d+)/;

export function lowerBound(value: string): string {
  if (DATE_ONLY.test(value)) return storedTime(new Date(`${value}T00:00:00Z`));
  const date = new Date(value);
  // Date keeps milliseconds: a bound between two is the next one, as no stored time lies between.
  if (/[1-9]/.test(SUB_MILLISECOND.exec(value)?.[1] ?? "")) date.setTime(date.getTime() + 1);
  return storedTime(date);
}

/** A date bound includes its whole (UTC) day: before the next midnight. */
export function upperBound(value: string): { at: string; inclusive: boolean } {
  if (!DATE_ONLY.test(value)) return { at: storedTime(new Date(value)), inclusive: true };
  const next = new Date(`${value}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  const at = storedTime(next);
  return { at, inclusive: at === LAST_STORED_TIME };
}
