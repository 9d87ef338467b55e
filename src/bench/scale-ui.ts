import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM_PATH, HEADLESS_CHROMIUM } from "./headless-chromium.js";
import type { Figure } from "./measure.js";
import { type ScaleLab, startScaleLab } from "./scale-http.js";
import { formatMs, printCurve } from "./scale-measure.js";

/**
 * The web UI's sessions page in Debian's chromium at each size: the time from navigation to the
 * first session row painted, and from a compare checkbox's click to the next paint. The floor is a
 * page of the same origin that renders the same first 50 rows (read raw, inlined) with plain DOM
 * code: what a page of rows costs the browser with nothing else around it.
 */

const FIRST_ROW_TIMEOUT_MS = 30_000;
const CLICK_BUDGET_MS = 10_000;
const ROW = '[data-testid="session-row"]';
const CHECKBOX = '[data-testid="compare-checkbox"]';

/** Records when the first row is in the document and when the frame after it has painted. */
const FIRST_ROW_PROBE = `(() => {
  const observer = new MutationObserver(() => {
    if (!document.querySelector(${JSON.stringify(ROW)})) return;
    observer.disconnect();
    const seen = performance.now();
    requestAnimationFrame(() => setTimeout(() => { window.__scaleFirstRow = { seen, painted: performance.now() }; }, 0));
  });
  observer.observe(document, { childList: true, subtree: true });
})();`;

function floorPage(rows: readonly { id: string; title: string; updated_at: string }[]): string {
  const data = JSON.stringify(rows).replaceAll("<", "\\u003c");
  return `<!doctype html><html><head><meta charset="utf-8"><title>floor</title></head><body>
<table><tbody id="rows"></tbody></table>
<script>
const body = document.getElementById("rows");
for (const row of ${data}) {
  const tr = document.createElement("tr");
  tr.dataset.testid = "session-row";
  tr.innerHTML = '<td><input type="checkbox" data-testid="compare-checkbox"></td><td></td><td></td>';
  tr.children[1].textContent = row.title;
  tr.children[2].textContent = row.updated_at;
  body.appendChild(tr);
}
</script></body></html>`;
}

/** Milliseconds from navigation start to the first row painted, or NaN after the timeout. */
async function firstRow(page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: "commit" });
  // Polled with evaluate (DevTools), not waitForFunction, which the UI's CSP refuses to eval.
  const deadline = performance.now() + FIRST_ROW_TIMEOUT_MS;
  while (performance.now() < deadline) {
    const painted = await page.evaluate<number | null>("window.__scaleFirstRow?.painted ?? null");
    if (painted !== null) return painted;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Number.NaN;
}

/** Median over clicks on successive checkboxes, each from the click to the next paint. */
async function clickToPaint(page: Page, clicks: number): Promise<number> {
  const times: number[] = [];
  const started = performance.now();
  for (let index = 0; index < clicks; index++) {
    // A string: this code runs in the page (the bench compiles without the DOM's types).
    const ms = await page.evaluate<number>(`(async () => {
      const boxes = document.querySelectorAll(${JSON.stringify(CHECKBOX)});
      const box = boxes[${index} % Math.min(boxes.length, 10)];
      if (!box) return Number.NaN;
      const start = performance.now();
      box.click();
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      return performance.now() - start;
    })()`);
    times.push(ms);
    if (performance.now() - started > CLICK_BUDGET_MS) break;
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

interface UiMeasure {
  floor_first_row: number;
  floor_click: number;
  first_row: number;
  click: number;
}

async function measureSize(browser: Browser, lab: ScaleLab): Promise<UiMeasure> {
  const context = await browser.newContext();
  try {
    // Trades the token for the session cookie (shared with the pages) without loading the UI.
    await context.request.get(lab.server.browserUrl, { maxRedirects: 0 });
    await context.addInitScript(FIRST_ROW_PROBE);
    const page = await context.newPage();
    const origin = new URL(lab.server.url).origin;
    const rows = lab.raw
      .prepare(
        "SELECT id, title, updated_at FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 50",
      )
      .all() as { id: string; title: string; updated_at: string }[];
    await page.route(`${origin}/__scale_floor`, (route) =>
      route.fulfill({ contentType: "text/html", body: floorPage(rows) }),
    );
    const floorTimes: number[] = [];
    for (let sample = 0; sample < 3; sample++) {
      floorTimes.push(await firstRow(page, `${origin}/__scale_floor`));
    }
    const floor_click = await clickToPaint(page, 7);
    const uiTimes: number[] = [];
    for (let sample = 0; sample < 3; sample++) {
      const ms = await firstRow(page, `${origin}/`);
      uiTimes.push(ms);
      if (!(ms < 5_000)) break;
    }
    const first_row = uiTimes.sort((a, b) => a - b)[Math.floor(uiTimes.length / 2)] as number;
    const click = Number.isNaN(first_row) ? Number.NaN : await clickToPaint(page, 7);
    return {
      floor_first_row: floorTimes.sort((a, b) => a - b)[1] as number,
      floor_click,
      first_row,
      click,
    };
  } finally {
    await context.close();
  }
}

export async function runUiCurves(
  fixtures: ReadonlyArray<{ count: number; path: string }>,
): Promise<Figure[]> {
  if (!existsSync(CHROMIUM_PATH)) {
    console.log(
      `  (no browser at ${CHROMIUM_PATH}: the web UI part is skipped; apt-get install chromium)`,
    );
    return [];
  }
  const browser = await chromium.launch(HEADLESS_CHROMIUM);
  const measured: UiMeasure[] = [];
  try {
    for (const { path } of fixtures) {
      const lab = await startScaleLab(path);
      try {
        measured.push(await measureSize(browser, lab));
      } finally {
        await lab.close();
      }
    }
  } finally {
    await browser.close();
  }
  const sizes = fixtures.map((fixture) => fixture.count);
  const shown = (ms: number, limit: number) =>
    Number.isNaN(ms) ? `> ${limit / 1000} s` : formatMs(ms);
  printCurve("web UI, sessions page, sessions:", sizes, [
    ["floor: 50 plain rows, first paint", measured.map((m) => formatMs(m.floor_first_row))],
    ["UI: first row painted", measured.map((m) => shown(m.first_row, FIRST_ROW_TIMEOUT_MS))],
    ["floor: plain checkbox click to paint", measured.map((m) => formatMs(m.floor_click))],
    ["UI: compare checkbox click to paint", measured.map((m) => formatMs(m.click))],
  ]);
  const last = measured[measured.length - 1] as UiMeasure;
  const size = (sizes[sizes.length - 1] as number).toLocaleString("en-US");
  return [
    {
      name: `web UI: first session row painted at ${size} sessions (chromium, median of up to 3)`,
      value: shown(last.first_row, FIRST_ROW_TIMEOUT_MS),
      baseline: `${formatMs(last.floor_first_row)} (a plain page of the same 50 rows)`,
      ratio: last.first_row / last.floor_first_row,
      target: "<= 1 s",
      met: last.first_row <= 1_000,
    },
    {
      name: `web UI: a compare checkbox click to the next paint at ${size} sessions`,
      value: formatMs(last.click),
      baseline: `${formatMs(last.floor_click)} (a plain checkbox)`,
      ratio: last.click / last.floor_click,
      target: "<= 100 ms",
      met: last.click <= 100,
    },
  ];
}
