import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { SessionListItem } from "../domain/records.js";
import { openSessionStore } from "../store/open-store.js";
import type { SessionStore } from "../store/session-store.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { USAGE_COLUMNS } from "../store/sqlite/statements.js";
import { createPostgresDatabase, startPostgresCluster } from "../testing/postgres-cluster.js";
import { type Figure, median, printFigures, timeMedian } from "./measure.js";
import { appendBenchCall } from "./pg-append-call.js";
import { populate, usageRow } from "./store-bench.js";

/**
 * `npm run bench -- pg`: the PostgreSQL store's figures of issue 16, on a throwaway cluster of
 * its own (the tests' cluster code, fsync off: the figures are the store's and the driver's cost,
 * not the disk's). appendUsage against a raw parameterized INSERT of the same row through the same
 * driver and pool; 8 writer processes at once, every row checked; listSessions at 100,000
 * sessions on PostgreSQL and on SQLite.
 */

const LIST_SESSIONS = 100_000;
/** 10M rows take ~20 minutes to build on a shared 2-core machine: $AGENT_LAB_BENCH_PG_ROWS sets it. */
const LIST_USAGE_ROWS = Number(process.env.AGENT_LAB_BENCH_PG_ROWS ?? 1_000_000);

type PgStore = SessionStore & { pool: pg.Pool };

async function openPg(url: string, pool_size: number): Promise<PgStore> {
  return (await openSessionStore(url, { application_name: "pg-bench", pool_size })) as PgStore;
}

const RAW_INSERT = `INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")}) VALUES (${USAGE_COLUMNS.map((_, index) => `$${index + 1}`).join(", ")})`;

/**
 * appendUsage, one awaited call at a time, against the raw INSERT of the same row through the
 * same pool. The two run in alternating blocks and the figure is the median of the blocks' paired
 * ratios: on a shared machine the load moves within seconds, and a block pair sees the same load.
 */
async function appendThroughput(adminUrl: string): Promise<{ figure: Figure; rate: number }> {
  const store = await openPg(await createPostgresDatabase(adminUrl, "bench_append"), 4);
  const blocks = 40;
  const perBlock = 100;
  const storeRates: number[] = [];
  const rawRates: number[] = [];
  const ratios: number[] = [];
  const timed = async (work: (index: number) => unknown) => {
    const start = performance.now();
    for (let index = 0; index < perBlock; index++) await work(index);
    return perBlock / ((performance.now() - start) / 1000);
  };
  try {
    await store.createSession({ title: "bench", config: {}, session_id: "bench" });
    await store.startTurn("bench", { turn_index: 1, user_message: "go" });
    for (let index = 0; index < 300; index++) {
      await appendBenchCall(store, "bench", `warm:${index}`);
      await store.pool.query(RAW_INSERT, usageRow(index, "bench", `rawwarm:${index}`));
    }
    for (let block = 0; block < blocks; block++) {
      const viaStore = () =>
        timed((index) => appendBenchCall(store, "bench", `s${block}:${index}`));
      const viaRaw = () =>
        timed((index) =>
          store.pool.query(RAW_INSERT, usageRow(index, "bench", `r${block}:${index}`)),
        );
      // Alternating which goes first, so neither always meets a warmer cache.
      let storeRate: number;
      let rawRate: number;
      if (block % 2 === 0) {
        storeRate = await viaStore();
        rawRate = await viaRaw();
      } else {
        rawRate = await viaRaw();
        storeRate = await viaStore();
      }
      storeRates.push(storeRate);
      rawRates.push(rawRate);
      ratios.push(storeRate / rawRate);
    }
  } finally {
    await store.close();
  }
  const rate = median(storeRates);
  const ratio = median(ratios);
  return {
    rate,
    figure: {
      name: `PostgreSQL appendUsage throughput (${blocks} blocks of ${perBlock} calls one at a time, alternating with the baseline; median of the paired ratios)`,
      value: `${Math.round(rate)} calls/s`,
      baseline: `${Math.round(median(rawRates))} rows/s (raw parameterized INSERT of the same row, same pg pool)`,
      ratio,
      target: ">= 0.8x",
      met: ratio >= 0.8,
    },
  };
}

const WRITERS = 8;
const PER_WRITER = 1_500;
const SHARED = 300;

interface WriterResult {
  stored: number;
  ms: number;
}

/** Starts a writer process; resolves once it is connected and waiting for `go`. */
function startWriter(url: string, writer: number) {
  const script = fileURLToPath(new URL("./pg-writer.js", import.meta.url));
  const child = spawn(
    process.execPath,
    [script, String(writer), String(PER_WRITER), String(SHARED)],
    {
      env: { ...process.env, AGENT_LAB_BENCH_PG_URL: url },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: child.stdout });
  const next = (() => {
    const iterator = lines[Symbol.asyncIterator]();
    return async () => {
      const { value, done } = await iterator.next();
      if (done) throw new Error(`writer ${writer} ended early`);
      return value as string;
    };
  })();
  return {
    ready: next().then((line) => {
      if (line !== "ready") throw new Error(`writer ${writer}: ${line}`);
    }),
    go: () => child.stdin.write("go\n"),
    result: async () => JSON.parse(await next()) as WriterResult,
  };
}

/** 8 processes append at once into one session; every row is then counted, none lost or twice. */
async function concurrentWriters(adminUrl: string, singleRate: number): Promise<Figure> {
  const url = await createPostgresDatabase(adminUrl, "bench_writers");
  const store = await openPg(url, 2);
  try {
    await store.createSession({ title: "writers", config: {}, session_id: "writers" });
    await store.startTurn("writers", { turn_index: 1, user_message: "go" });
    const writers = Array.from({ length: WRITERS }, (_, writer) => startWriter(url, writer));
    await Promise.all(writers.map((writer) => writer.ready));
    const start = performance.now();
    for (const writer of writers) writer.go();
    const results = await Promise.all(writers.map((writer) => writer.result()));
    const seconds = (performance.now() - start) / 1000;
    const attempts = WRITERS * (PER_WRITER + SHARED);
    const expected = WRITERS * PER_WRITER + SHARED;
    const { rows } = await store.pool.query<{ total: string; keys: string; shared: string }>(
      `SELECT COUNT(*) AS total, COUNT(DISTINCT metric_key) AS keys,
              COUNT(*) FILTER (WHERE metric_key LIKE 'shared:%') AS shared
       FROM usage_stats WHERE session_id = 'writers'`,
    );
    const counted = rows[0] as { total: string; keys: string; shared: string };
    const reported = results.reduce((sum, result) => sum + result.stored, 0);
    const summary = await store.usageRollups("writers");
    const exact =
      Number(counted.total) === expected &&
      Number(counted.keys) === expected &&
      Number(counted.shared) === SHARED &&
      reported === expected &&
      summary.session.call_count === expected &&
      summary.session.total_tokens === expected * 10;
    const rate = attempts / seconds;
    return {
      name: `PostgreSQL, ${WRITERS} writer processes appending at once into one session (${PER_WRITER} own calls each + the same ${SHARED} shared calls tried by all): ${counted.total} rows stored, ${expected} expected, ${counted.keys} distinct keys, ${reported} appends answered true, roll-up ${summary.session.call_count} calls`,
      value: `${Math.round(rate)} appends/s in total`,
      baseline: `${Math.round(singleRate)} calls/s (one process, the figure above)`,
      ratio: rate / singleRate,
      target: "zero lost or duplicated rows",
      met: exact,
    };
  } finally {
    await store.close();
  }
}

async function timeMedianAsync(run: () => unknown, samples: number): Promise<number> {
  await run();
  const times: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return median(times);
}

/** The same lab as store-bench's populate: sessions of two turns, usage rows spread over them. */
async function populatePg(store: PgStore, sessions: number, rows: number): Promise<void> {
  const stamp = new Date().toISOString();
  const client = await store.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO sessions (id, title, created_at, updated_at, config_json, turn_count)
       SELECT 'session-' || i, 'Session ' || i, $1, $1, '{"tool_invocation_mode":"dual_agent"}', 2
       FROM generate_series(0, $2 - 1) AS i`,
      [stamp, sessions],
    );
    await client.query(
      `INSERT INTO turns (session_id, turn_index, user_message, started_at, wall_time_ms)
       SELECT 'session-' || i, t, CASE t WHEN 1 THEN 'hello' ELSE 'again' END, $1, 900
       FROM generate_series(0, $2 - 1) AS i, generate_series(1, 2) AS t`,
      [stamp, sessions],
    );
    // Through the store's own triggers (turn roll-ups), as appendUsage's rows go.
    await client.query(
      `INSERT INTO usage_stats (session_id, turn_index, round_index, prompt_tokens,
         completion_tokens, total_tokens, cached_tokens, ttft_ms, elapsed_ms, created_at, agent,
         call_kind, used_fallback, metric_key)
       SELECT 'session-' || (i % $2), 1 + (i % 2), 1, 30, 12, 42, 8, 100, 300, $1, 'chat_agent',
         'chat_completion', 0, 'k:' || i
       FROM generate_series(0, $3 - 1) AS i`,
      [stamp, sessions, rows],
    );
    await client.query("COMMIT");
    await client.query("ANALYZE");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The least any whole list can cost: the list's columns as stored (no aggregate), read through
 * the same driver into row objects. No store can return every row faster. PostgreSQL keeps the
 * token totals in a per-turn rollup table, so its bare read has five columns, not six.
 */
const BARE_LIST = {
  sqlite:
    "SELECT id, title, created_at, updated_at, turn_count, folded_tokens FROM sessions ORDER BY updated_at DESC, id DESC",
  postgres:
    "SELECT id, title, created_at, updated_at, turn_count FROM sessions ORDER BY updated_at DESC, id DESC",
};

/**
 * A reference cost beside the whole list: V8 making the list's objects (and their strings) from
 * one JSON text already in memory with JSON.parse, no database, no driver, no query. Not proven
 * the least possible (other ways of making the objects were measured by hand, DESIGN.md), but
 * what the strings and objects alone cost in this run. The text holds the rows the store returned.
 */
function jsonParseMs(rows: readonly SessionListItem[]): number {
  const text = JSON.stringify(rows);
  return timeMedian(() => JSON.parse(text), 7);
}

interface ListFloors {
  /** The stored columns read as rows through the driver. */
  driver_ms: number;
  /** PostgreSQL: the same read through postgres.js (see driverReads). */
  peer?: { ms: number; ratio: number };
  /** jsonParseMs: the rows' objects made by V8 alone. */
  json_parse_ms: number;
}

function listFigure(
  backend: string,
  ms: number,
  rawMs: number,
  page: boolean,
  floors: ListFloors,
): Figure {
  const what = page ? "listSessionPage (first page of 50)" : "listSessions (the whole list)";
  const peer =
    floors.peer === undefined
      ? ""
      : `, through postgres.js: ${floors.peer.ms.toFixed(1)} ms (${floors.peer.ratio.toFixed(2)}x node-postgres, median of paired reads)`;
  // The page reads 50 rows: the whole list's floors say nothing of it.
  const wholeListFloors = page
    ? ""
    : `; the stored columns read as rows through the driver: ${floors.driver_ms.toFixed(1)} ms${peer}; V8's JSON.parse making the ${LIST_SESSIONS.toLocaleString("en")} listed objects from one JSON text in memory (no database): ${floors.json_parse_ms.toFixed(1)} ms`;
  return {
    name: `${backend} ${what}, ${LIST_SESSIONS.toLocaleString("en")} sessions / ${LIST_USAGE_ROWS.toLocaleString("en")} usage rows (median of 7)`,
    value: `${ms.toFixed(1)} ms`,
    baseline: `${rawMs.toFixed(1)} ms (raw per-session aggregate query)${wholeListFloors}`,
    ratio: ms / rawMs,
    target: "<= 50 ms",
    met: ms <= 50,
  };
}

/**
 * The bare list read through node-postgres and through postgres.js, the other well-kept driver
 * issue 16 names (both parse every row in JavaScript): whether a store on it could return the
 * whole list where node-postgres cannot. Read in pairs, the first of each pair alternating, since
 * the machine's speed drifts between two blocks of reads; each driver's median, and the median of
 * the pairs' ratios.
 */
async function driverReads(
  pool: pg.Pool,
  url: string,
): Promise<{ driver_ms: number; peer: { ms: number; ratio: number } }> {
  // Loaded here: the other parts of the bench never use it.
  const { default: postgres } = await import("postgres");
  // The schema's NOTICEs (none expected on a read) would otherwise be printed to the console.
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const timed = async (read: () => Promise<unknown>) => {
    const start = performance.now();
    await read();
    return performance.now() - start;
  };
  const readPg = () => pool.query(BARE_LIST.postgres);
  const readPeer = () => sql.unsafe(BARE_LIST.postgres);
  try {
    await readPg();
    await readPeer();
    const pgMs: number[] = [];
    const peerMs: number[] = [];
    const ratios: number[] = [];
    for (let pair = 0; pair < 9; pair++) {
      let pgTime: number;
      let peerTime: number;
      if (pair % 2 === 0) {
        pgTime = await timed(readPg);
        peerTime = await timed(readPeer);
      } else {
        peerTime = await timed(readPeer);
        pgTime = await timed(readPg);
      }
      pgMs.push(pgTime);
      peerMs.push(peerTime);
      ratios.push(peerTime / pgTime);
    }
    return { driver_ms: median(pgMs), peer: { ms: median(peerMs), ratio: median(ratios) } };
  } finally {
    await sql.end();
  }
}

async function listSessionsPg(adminUrl: string): Promise<Figure[]> {
  const url = await createPostgresDatabase(adminUrl, "bench_list");
  const store = await openPg(url, 2);
  try {
    const started = performance.now();
    await populatePg(store, LIST_SESSIONS, LIST_USAGE_ROWS);
    console.log(
      `  (PostgreSQL: built ${LIST_SESSIONS} sessions and ${LIST_USAGE_ROWS} usage rows in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
    const naive = `SELECT s.id, s.title, s.created_at, s.updated_at,
        (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
        (SELECT COALESCE(SUM(total_tokens), 0) FROM usage_stats u WHERE u.session_id = s.id) AS total_tokens
      FROM sessions s ORDER BY s.updated_at DESC, s.id DESC`;
    // The load is one transaction that rewrote each turn's roll-up row (triggers.ts) once per
    // call, leaving that many dead versions for the list's per-session sum to step over until a
    // vacuum. Autovacuum clears them within a minute on a live database (and, for the 100,000
    // sessions inserted, marks their pages all-visible, so the list is read from its index
    // alone): the figure is taken after that vacuum, and the list as the load left it is printed
    // beside it.
    const loadedMs = await timeMedianAsync(() => store.listSessions(), 3);
    await store.pool.query("VACUUM ANALYZE turn_usage");
    await store.pool.query("VACUUM ANALYZE sessions");
    console.log(
      `  (PostgreSQL listSessions just after the load, before the vacuum: ${loadedMs.toFixed(1)} ms)`,
    );
    const listMs = await timeMedianAsync(() => store.listSessions(), 7);
    const pageMs = await timeMedianAsync(() => store.listSessionPage({ limit: 50 }), 7);
    const rawMs = await timeMedianAsync(() => store.pool.query(naive), 3);
    const listed = await store.listSessions();
    const { rows } = await store.pool.query<{ id: string; total_tokens: string }>(naive);
    const agree =
      listed.length === rows.length &&
      listed.every((row, index) => row.total_tokens === Number(rows[index]?.total_tokens));
    if (!agree) throw new Error("PostgreSQL listSessions totals disagree with the raw aggregate");
    const floors = { ...(await driverReads(store.pool, url)), json_parse_ms: jsonParseMs(listed) };
    return [
      listFigure("PostgreSQL", listMs, rawMs, false, floors),
      listFigure("PostgreSQL", pageMs, rawMs, true, floors),
    ];
  } finally {
    await store.close();
  }
}

async function listSessionsSqlite(directory: string): Promise<Figure[]> {
  const path = join(directory, "list.sqlite3");
  const started = performance.now();
  populate(path, LIST_SESSIONS, LIST_USAGE_ROWS);
  console.log(
    `  (SQLite: built ${LIST_SESSIONS} sessions and ${LIST_USAGE_ROWS} usage rows in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  const store = new SqliteSessionStore(path);
  try {
    const naive = `SELECT s.id, (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
        (SELECT COALESCE(SUM(total_tokens), 0) FROM usage_stats u WHERE u.session_id = s.id) AS total_tokens
      FROM sessions s ORDER BY s.updated_at DESC, s.id DESC`;
    const { default: Database } = await import("better-sqlite3");
    const raw = new Database(path, { readonly: true });
    const listMs = await timeMedianAsync(async () => store.listSessions(), 7);
    const pageMs = await timeMedianAsync(async () => store.listSessionPage({ limit: 50 }), 7);
    const rawMs = await timeMedianAsync(async () => raw.prepare(naive).all(), 3);
    const floorMs = await timeMedianAsync(async () => raw.prepare(BARE_LIST.sqlite).all(), 7);
    raw.close();
    const floors = { driver_ms: floorMs, json_parse_ms: jsonParseMs(store.listSessions()) };
    return [
      listFigure("SQLite", listMs, rawMs, false, floors),
      listFigure("SQLite", pageMs, rawMs, true, floors),
    ];
  } finally {
    store.close();
  }
}

export async function runPgBench(): Promise<Figure[]> {
  console.log("PostgreSQL benchmark (a throwaway cluster and temporary files, removed afterwards)");
  const cluster = await startPostgresCluster();
  const directory = mkdtempSync(join(tmpdir(), "agent-lab-pg-bench-"));
  try {
    const { figure, rate } = await appendThroughput(cluster.adminUrl);
    const figures = [figure, await concurrentWriters(cluster.adminUrl, rate)];
    figures.push(...(await listSessionsPg(cluster.adminUrl)));
    figures.push(...(await listSessionsSqlite(directory)));
    printFigures("PostgresSessionStore (and SQLite's listSessions at the same size)", figures);
    return figures;
  } finally {
    cluster.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}
