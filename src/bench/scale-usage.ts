import type { Figure } from "./measure.js";
import { callsSessionId } from "./scale-fixtures.js";
import {
  cursorAfter,
  type EndpointTiming,
  startScaleLab,
  timeCall,
  timeEndpoint,
  unmeasured,
} from "./scale-http.js";
import { formatMb, formatMs, printCurve } from "./scale-measure.js";

/**
 * One session's usage at each call count: the roll-ups (`GET …/usage`) against the raw per-turn
 * GROUP BY (what keeping them saves; the raw read of the kept rows is printed beside it), and a
 * page of calls ten pages in (`GET …/usage/calls`) against the raw keyset query. Neither
 * response may grow with the number of calls.
 */

interface UsageMeasure {
  rollup_floor: number;
  /** The kept roll-ups read raw: what the store's read itself cannot go below. */
  kept_floor: number;
  rollup_store: number;
  rollups: EndpointTiming;
  rollup_bytes: number;
  page_floor: number;
  page_store: number;
  page: EndpointTiming;
}

const PAGE = 50;
const DEEP_PAGES = 10;

async function measureUsage(path: string, calls: number): Promise<UsageMeasure> {
  const id = callsSessionId(calls);
  const lab = await startScaleLab(path);
  try {
    const rollup = lab.raw.prepare(`
      SELECT turn_index, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(total_tokens),
        SUM(cached_tokens), SUM(elapsed_ms), SUM(cost_estimated_usd)
      FROM usage_stats WHERE session_id = ? GROUP BY turn_index`);
    const rollupFloor = await timeCall(() => rollup.all(id), 9, 6_000);
    // The store reads roll-ups its triggers keep (turn_usage), not the calls: beside the GROUP BY
    // it saves, the raw read of those rows is the floor of the read itself.
    const kept = lab.raw.prepare(
      "SELECT * FROM turn_usage WHERE session_id = ? ORDER BY turn_index",
    );
    const keptFloor = await timeCall(() => kept.all(id), 9, 6_000);
    const rollupStore = await timeCall(() => lab.store.usageRollups(id), 9, 6_000);
    const base = `/api/sessions/${id}`;
    const rollups = await timeEndpoint(lab, `${base}/usage`, 9, 6_000);

    // Two plans for the same rows; the floor is the faster on this file: the session's index
    // (sorting its calls), or the rowid range that skips to the cursor (`+` keeps the index out).
    const keysets = ["session_id", "+session_id"].map((column) =>
      lab.raw.prepare(
        `SELECT * FROM usage_stats WHERE ${column} = ? AND id > ? ORDER BY id LIMIT ${PAGE}`,
      ),
    );
    const after = lab.raw
      .prepare(
        `SELECT id FROM usage_stats WHERE session_id = ? ORDER BY id LIMIT 1 OFFSET ${PAGE * DEEP_PAGES - 1}`,
      )
      .get(id) as { id: number };
    const floors = [];
    for (const keyset of keysets) floors.push(await timeCall(() => keyset.all(id, after.id)));
    const pageFloor = { median_ms: Math.min(...floors.map((floor) => floor.median_ms)) };
    const found = await cursorAfter(lab, `${base}/usage/calls?limit=${PAGE}`, DEEP_PAGES);
    const cursor = "cursor" in found ? found.cursor : null;
    const missing = unmeasured("error" in found ? found.error : "no cursor");
    const page =
      cursor === null
        ? missing
        : await timeEndpoint(
            lab,
            `${base}/usage/calls?limit=${PAGE}&cursor=${encodeURIComponent(cursor)}`,
          );
    const pageStore =
      cursor === null
        ? Number.NaN
        : (await timeCall(() => lab.store.listUsageCalls(id, { limit: PAGE, cursor }))).median_ms;
    return {
      rollup_floor: rollupFloor.median_ms,
      kept_floor: keptFloor.median_ms,
      rollup_store: rollupStore.median_ms,
      rollups,
      rollup_bytes: rollups.body === null ? Number.NaN : JSON.stringify(rollups.body).length,
      page_floor: pageFloor.median_ms,
      page_store: pageStore,
      page,
    };
  } finally {
    await lab.close();
  }
}

export async function runUsageCurves(
  path: string,
  callCounts: readonly number[],
): Promise<Figure[]> {
  const measured: UsageMeasure[] = [];
  for (const calls of callCounts) measured.push(await measureUsage(path, calls));
  printCurve("GET /api/sessions/:id/usage, calls:", callCounts, [
    ["raw GROUP BY turn_index", measured.map((m) => formatMs(m.rollup_floor))],
    ["raw read of the kept roll-ups", measured.map((m) => formatMs(m.kept_floor))],
    ["store.usageRollups", measured.map((m) => formatMs(m.rollup_store))],
    ["HTTP, parsed by the client", measured.map((m) => formatMs(m.rollups.median_ms))],
    ["  response size", measured.map((m) => formatMb(m.rollup_bytes))],
    ["  peak RSS growth", measured.map((m) => formatMb(m.rollups.rss_growth_bytes))],
  ]);
  printCurve(`GET …/usage/calls?limit=${PAGE}, page ${DEEP_PAGES + 1}, calls:`, callCounts, [
    ["raw keyset query", measured.map((m) => formatMs(m.page_floor))],
    ["store.listUsageCalls", measured.map((m) => formatMs(m.page_store))],
    ["HTTP, parsed by the client", measured.map((m) => formatMs(m.page.median_ms))],
    ["  peak RSS growth", measured.map((m) => formatMb(m.page.rss_growth_bytes))],
  ]);
  const errors = measured.flatMap((m) => [m.rollups.error, m.page.error]);
  for (const error of new Set(errors.filter(Boolean))) console.log(`    (${error})`);

  const last = measured[measured.length - 1] as UsageMeasure;
  const first = measured[0] as UsageMeasure;
  const calls = (callCounts[callCounts.length - 1] as number).toLocaleString("en-US");
  const MB = 1_048_576;
  return [
    {
      name: `GET /api/sessions/:id/usage (roll-ups) at ${calls} calls`,
      value: `${formatMs(last.rollups.median_ms)}, peak RSS +${formatMb(last.rollups.rss_growth_bytes)}`,
      baseline: `${formatMs(last.rollup_floor)} (the raw GROUP BY turn_index; the kept roll-ups read raw: ${formatMs(last.kept_floor)}, ${(last.rollups.median_ms / last.kept_floor).toFixed(1)}x)`,
      ratio: last.rollups.median_ms / last.rollup_floor,
      // The roll-ups are per turn, so the body grows with turns, never with calls per turn.
      target: "<= 1.5x the raw GROUP BY, peak RSS growth <= 32 MB",
      met:
        last.rollups.median_ms <= 1.5 * last.rollup_floor &&
        last.rollups.rss_growth_bytes <= 32 * MB,
    },
    {
      name: `GET …/usage/calls?limit=${PAGE}, page ${DEEP_PAGES + 1}, at ${calls} calls`,
      value: `${formatMs(last.page.median_ms)}, peak RSS +${formatMb(last.page.rss_growth_bytes)}`,
      baseline: `${formatMs(last.page_floor)} (the raw keyset query; at ${callCounts[0]} calls ${formatMs(first.page.median_ms)})`,
      ratio: last.page.median_ms / last.page_floor,
      target: "<= 5 ms and <= 8 MB peak RSS growth, as at the smallest size",
      met: last.page.median_ms <= 5 && last.page.rss_growth_bytes <= 8 * MB,
    },
  ];
}
