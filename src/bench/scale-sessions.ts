import type Database from "better-sqlite3";
import type { SessionQuery } from "../domain/session-query.js";
import type { Figure } from "./measure.js";
import {
  cursorAfter,
  type EndpointTiming,
  type ScaleLab,
  startScaleLab,
  timeCall,
  timeEndpoint,
  unmeasured,
} from "./scale-http.js";
import { formatMb, formatMs, printCurve } from "./scale-measure.js";

/**
 * The session list and the experiments list at each size: the HTTP page, the store's method and
 * the raw keyset query that is the floor (the same rows, straight from SQLite), for the first page,
 * a page ten pages deep (through the cursor) and each filter.
 */

const LIST_COLUMNS = [
  "id",
  "title",
  "created_at",
  "updated_at",
  "config_json",
  "turn_count",
  "folded_tokens",
]
  .map((column) => `s.${column}`)
  .join(", ");

/** A tag's rows come from session_tags, whose (tag, updated_at, id) index holds the list order. */
const TAGGED = "session_tags AS t JOIN sessions AS s ON s.id = t.session_id";

interface ListCase {
  label: string;
  /** The API's query string (without limit/cursor) and the store query's filter. */
  params: Record<string, string>;
  /**
   * The raw floor's WHERE clause, with `?` for `value`: on the indexed column or table the store
   * reads (a floor on a slower plan, as `json_extract` over every config, flattered the store).
   */
  where: string;
  value: string | null;
  /** Where the rows come from, when not `sessions AS s` alone. */
  from?: string;
  /** A second plan for the same rows: the floor is the faster of the two on the file. */
  alternative?: { where: string; value: string };
}

const CASES: ListCase[] = [
  { label: "page 1", params: {}, where: "1", value: null },
  {
    label: "mode=chat_agent_tools",
    params: { mode: "chat_agent_tools" },
    where: "s.mode = ?",
    value: "chat_agent_tools",
  },
  {
    label: "status=failed",
    params: { status: "failed" },
    where: "s.last_status = ?",
    value: "failed",
  },
  {
    label: "tag=nightly",
    params: { tag: "nightly" },
    where: "t.tag = ?",
    value: "nightly",
    from: TAGGED,
  },
  {
    label: "q=triage",
    params: { q: "triage" },
    // The rows in list order until a page matches, or the title's trigram index, whichever is
    // faster on the file: the store probes the newest 2,000 rows first and reads the index when
    // they hold less than a page.
    where: "s.title LIKE '%' || ? || '%'",
    value: "triage",
    alternative: {
      where: `s.id IN (SELECT k.session_id FROM sessions_fts JOIN session_search AS k
        ON k.key = sessions_fts.rowid WHERE sessions_fts MATCH ?)`,
      value: '"triage"',
    },
  },
  {
    label: "experiment=exp-007",
    params: { experiment: "exp-007" },
    where: "s.experiment_id = ?",
    value: "exp-007",
  },
];

const PAGE = 50;
const DEEP_PAGES = 10;

function rawPage(
  raw: Database.Database,
  listCase: Pick<ListCase, "where" | "from">,
  after: { updated_at: string; id: string } | null,
) {
  const [updatedAt, id] =
    listCase.from === TAGGED ? ["t.updated_at", "t.session_id"] : ["s.updated_at", "s.id"];
  const keyset = after === null ? "" : `AND (${updatedAt}, ${id}) < (@updated_at, @id)`;
  return raw.prepare(
    `SELECT ${LIST_COLUMNS} FROM ${listCase.from ?? "sessions AS s"} WHERE (${listCase.where}) ${keyset}
     ORDER BY ${updatedAt} DESC, ${id} DESC LIMIT ${PAGE}`,
  );
}

interface Measured {
  floor: number;
  store: number;
  http: EndpointTiming;
}

async function measureCase(lab: ScaleLab, listCase: ListCase): Promise<Measured> {
  const statement = rawPage(lab.raw, listCase, null);
  const args = listCase.value === null ? [] : [listCase.value];
  let floor = await timeCall(() => statement.all(...args));
  const { alternative } = listCase;
  if (alternative !== undefined) {
    const other = rawPage(lab.raw, { where: alternative.where }, null);
    const otherFloor = await timeCall(() => other.all(alternative.value));
    if (otherFloor.median_ms < floor.median_ms) floor = otherFloor;
  }
  const query: SessionQuery = { limit: PAGE, ...listCase.params };
  const store = await timeCall(() => lab.store.listSessionPage(query));
  // Experiment runs are left out of the list unless asked; the floor and the store read them all.
  const search = new URLSearchParams({
    limit: String(PAGE),
    include: "experiments",
    ...listCase.params,
  });
  const http = await timeEndpoint(lab, `/api/sessions?${search}`);
  return { floor: floor.median_ms, store: store.median_ms, http };
}

async function measureDeepPage(lab: ScaleLab): Promise<Measured> {
  // The floor resumes after the 500th row, as a keyset page does.
  const last = lab.raw
    .prepare(
      `SELECT updated_at, id FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 1 OFFSET ${PAGE * DEEP_PAGES - 1}`,
    )
    .get() as { updated_at: string; id: string };
  const statement = rawPage(lab.raw, { where: "1" }, last);
  const floor = await timeCall(() => statement.all(last));
  const found = await cursorAfter(
    lab,
    `/api/sessions?limit=${PAGE}&include=experiments`,
    DEEP_PAGES,
  );
  if ("error" in found) {
    const missing = found.error;
    return {
      floor: floor.median_ms,
      store: Number.NaN,
      http: unmeasured(missing),
    };
  }
  const { cursor } = found;
  const store = await timeCall(() => lab.store.listSessionPage({ limit: PAGE, cursor }));
  const http = await timeEndpoint(
    lab,
    `/api/sessions?limit=${PAGE}&include=experiments&cursor=${encodeURIComponent(cursor)}`,
  );
  return { floor: floor.median_ms, store: store.median_ms, http };
}

async function measureExperimentList(lab: ScaleLab): Promise<Measured> {
  const statement = lab.raw.prepare(
    `SELECT experiment_id, COUNT(*) AS sessions, MIN(created_at), MAX(created_at) FROM sessions
     WHERE experiment_id IS NOT NULL GROUP BY experiment_id`,
  );
  const floor = await timeCall(() => statement.all());
  const store = await timeCall(() => lab.store.listExperimentSummaries());
  const http = await timeEndpoint(lab, "/api/experiments", 15, 6_000);
  return { floor: floor.median_ms, store: store.median_ms, http };
}

const rowsOf = (timing: EndpointTiming): string => {
  const body = timing.body as { sessions?: unknown[]; experiments?: unknown[] } | null;
  const rows = body?.sessions ?? body?.experiments;
  return Array.isArray(rows) ? String(rows.length) : "n/a";
};

export async function runSessionCurves(
  fixtures: ReadonlyArray<{ count: number; path: string }>,
): Promise<Figure[]> {
  const labels = [
    ...CASES.map((c) => c.label),
    `page ${DEEP_PAGES + 1} (cursor)`,
    "GET /api/experiments",
  ];
  const results = new Map<string, Measured[]>(labels.map((label) => [label, []]));
  for (const { path } of fixtures) {
    const lab = await startScaleLab(path);
    try {
      for (const listCase of CASES) {
        results.get(listCase.label)?.push(await measureCase(lab, listCase));
      }
      results.get(labels[CASES.length] as string)?.push(await measureDeepPage(lab));
      results.get("GET /api/experiments")?.push(await measureExperimentList(lab));
    } finally {
      await lab.close();
    }
  }
  const sizes = fixtures.map((fixture) => fixture.count);
  for (const label of labels) {
    const measured = results.get(label) ?? [];
    const api = label.startsWith("GET") ? label : `GET /api/sessions ${label}`;
    printCurve(`${api}, sessions:`, sizes, [
      ["raw SQL floor", measured.map((m) => formatMs(m.floor))],
      ["store method", measured.map((m) => formatMs(m.store))],
      ["HTTP, parsed by the client", measured.map((m) => formatMs(m.http.median_ms))],
      ["  rows in the response", measured.map((m) => rowsOf(m.http))],
      ["  peak RSS growth", measured.map((m) => formatMb(m.http.rss_growth_bytes))],
    ]);
    for (const error of new Set(measured.map((m) => m.http.error).filter(Boolean))) {
      console.log(`    (${error})`);
    }
  }

  const largest = sizes.length - 1;
  const at = (label: string) => results.get(label)?.[largest] as Measured;
  const size = sizes[largest]?.toLocaleString("en-US");
  const figure = (label: string, name: string, targetMs: number): Figure => {
    const measured = at(label);
    return {
      name: `${name} at ${size} sessions (median, HTTP, parsed)`,
      value: formatMs(measured.http.median_ms),
      baseline: `${formatMs(measured.floor)} (the raw keyset query)`,
      ratio: measured.http.median_ms / measured.floor,
      target: `<= ${targetMs} ms`,
      met: measured.http.median_ms <= targetMs,
    };
  };
  return [
    figure("page 1", "GET /api/sessions?limit=50", 5),
    figure(
      `page ${DEEP_PAGES + 1} (cursor)`,
      `GET /api/sessions?limit=50, page ${DEEP_PAGES + 1} by cursor`,
      5,
    ),
    ...CASES.slice(1).map((c) => figure(c.label, `GET /api/sessions?limit=50&${c.label}`, 5)),
    {
      ...figure("GET /api/experiments", "GET /api/experiments", 50),
      baseline: `${formatMs(at("GET /api/experiments").floor)} (one GROUP BY experiment_id)`,
    },
  ];
}
