import type Database from "better-sqlite3";
import type { Figure } from "./measure.js";
import { experimentId } from "./scale-experiment-fixture.js";
import { type EndpointTiming, startScaleLab, timeCall, timeEndpoint } from "./scale-http.js";
import { formatMb, formatMs, peakGrowth, printCurve } from "./scale-measure.js";

/**
 * An experiment's report at each run count: the first request on a fresh server (cold: the report
 * is built), the same request again (served from the cache), and the floor, reading the same rows
 * in bulk with raw queries; plus a cell's drill-down page.
 */

/**
 * The floor: every row the report may read (the experiment's sessions, their turns, assistant and
 * tool messages, calls and `tool_end` audit rows), each table in one query, stepped through
 * without being held. User messages are not among them: scoring never reads one.
 */
function bulkRead(raw: Database.Database): (id: string) => number {
  const queries = [
    "SELECT * FROM sessions WHERE experiment_id = ? ORDER BY created_at, id",
    "SELECT t.* FROM sessions s JOIN turns t ON t.session_id = s.id WHERE s.experiment_id = ?",
    `SELECT m.* FROM sessions s JOIN messages m ON m.session_id = s.id
     WHERE s.experiment_id = ? AND m.role IN ('assistant', 'tool')`,
    "SELECT u.* FROM sessions s JOIN usage_stats u ON u.session_id = s.id WHERE s.experiment_id = ?",
    `SELECT a.* FROM sessions s JOIN audit_logs a ON a.session_id = s.id
     WHERE s.experiment_id = ? AND a.event = 'tool_end'`,
  ].map((sql) => raw.prepare(sql));
  return (id) => {
    let rows = 0;
    for (const statement of queries) for (const _row of statement.iterate(id)) rows++;
    return rows;
  };
}

interface ReportMeasure {
  floor: number;
  store: number;
  cold: number;
  cold_rss: number;
  cached: EndpointTiming;
  /** `?runs=false`: the cells only, what the experiment page asks for. */
  cells_only: EndpointTiming;
  cell_page: EndpointTiming;
  error: string | null;
}

async function measureReport(path: string, runs: number): Promise<ReportMeasure> {
  const id = experimentId(runs);
  const lab = await startScaleLab(path);
  try {
    const read = bulkRead(lab.raw);
    const floor = await timeCall(() => read(id), 5, 10_000);
    const store = await timeCall(() => lab.store.experimentRecords(id), 5, 10_000);
    let error: string | null = null;
    const cold = await peakGrowth(async () => {
      const start = performance.now();
      try {
        // Until the whole body has arrived; decoding and parsing it are the client's work, not
        // the report's (see ScaleLab.get).
        await lab.get(`/api/experiments/${id}`, { parse: false });
      } catch (failure) {
        error = (failure as Error).message;
      }
      return performance.now() - start;
    });
    const cached = await timeEndpoint(lab, `/api/experiments/${id}`, 15, 6_000);
    const cellsOnly = await timeEndpoint(lab, `/api/experiments/${id}?runs=false`, 15, 6_000);
    const cell = lab.raw
      .prepare(
        "SELECT json_extract(config_json, '$.experiment.cell') AS cell FROM sessions WHERE experiment_id = ? LIMIT 1",
      )
      .get(id) as { cell: string };
    const cellPage = await timeEndpoint(
      lab,
      `/api/experiments/${id}/cells/${encodeURIComponent(cell.cell)}/sessions?limit=50`,
      15,
      6_000,
    );
    return {
      floor: floor.median_ms,
      store: store.median_ms,
      cold: error === null ? cold.result : Number.NaN,
      cold_rss: cold.bytes,
      cached,
      cells_only: cellsOnly,
      cell_page: cellPage,
      error,
    };
  } finally {
    await lab.close();
  }
}

export async function runExperimentCurves(
  path: string,
  runCounts: readonly number[],
): Promise<Figure[]> {
  const measured: ReportMeasure[] = [];
  for (const runs of runCounts) measured.push(await measureReport(path, runs));
  printCurve("GET /api/experiments/:id, runs:", runCounts, [
    ["bulk read floor (5 raw queries)", measured.map((m) => formatMs(m.floor))],
    ["store.experimentRecords", measured.map((m) => formatMs(m.store))],
    ["HTTP cold (report built)", measured.map((m) => formatMs(m.cold))],
    ["  peak RSS growth", measured.map((m) => formatMb(m.cold_rss))],
    ["HTTP again (cached, every run)", measured.map((m) => formatMs(m.cached.median_ms))],
    ["  peak RSS growth", measured.map((m) => formatMb(m.cached.rss_growth_bytes))],
    ["?runs=false (cells only)", measured.map((m) => formatMs(m.cells_only.median_ms))],
    ["a cell's sessions, limit=50", measured.map((m) => formatMs(m.cell_page.median_ms))],
    ["  peak RSS growth", measured.map((m) => formatMb(m.cell_page.rss_growth_bytes))],
  ]);
  const errors = measured.flatMap((m) => [
    m.error,
    m.cached.error,
    m.cells_only.error,
    m.cell_page.error,
  ]);
  for (const error of new Set(errors.filter(Boolean))) console.log(`    (${error})`);

  const last = measured[measured.length - 1] as ReportMeasure;
  const runs = (runCounts[runCounts.length - 1] as number).toLocaleString("en-US");
  return [
    {
      name: `an experiment report of ${runs} runs, first request (built)`,
      value: formatMs(last.cold),
      baseline: `${formatMs(last.floor)} (the same rows read in bulk)`,
      ratio: last.cold / last.floor,
      target: "<= 1.5x the bulk read",
      met: last.cold <= 1.5 * last.floor,
    },
    {
      name: `the same report again, cells only (?runs=false, as the experiment page asks), from the cache, median of ${last.cells_only.samples}`,
      value: formatMs(last.cells_only.median_ms),
      baseline: `${formatMs(last.cold)} (built; every run from the cache: ${formatMs(last.cached.median_ms)})`,
      ratio: last.cells_only.median_ms / last.cold,
      target: "<= 20 ms",
      met: last.cells_only.median_ms <= 20,
    },
  ];
}
