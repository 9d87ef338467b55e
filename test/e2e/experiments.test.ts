/**
 * The experiments pages in a real browser (Debian's chromium through playwright-core) against the
 * lab's server on 127.0.0.1: an experiment seeded as the runner stores one (sessions tagged with
 * `experiment`, real turns on the simulated model), then the list, the matrix, a cell's runs, two
 * cells compared, and a run's session. Screenshots: test-artifacts/screenshots/08-experiment*.png.
 */
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, requireChromium, screenshot, setUpLab, WAIT_MS } from "./harness.js";

requireChromium();

const EXPERIMENT = "smoke-e2e";
const TOOLS_CELL = "chat_agent_tools · sim · sim";
const DUAL_CELL = "dual_agent · sim · sim";

const SEARCH = {
  tools: [{ name: "mock_search", arguments: { query: { contains: "agent lab" } } }],
};
const WRONG_TOOL = { tools: [{ name: "mock_ticket" }] };
const NO_TOOLS = { no_tools: true };

interface Run {
  cell: string;
  scenario: string;
  category: string;
  repetition: number;
  expect: Record<string, unknown>[];
  message: string;
}

const e2e = setUpLab();
const { newPage } = e2e;
/** Session ids by run key. */
const sessions = new Map<string, string>();

/** One run as the runner stores it: a session whose config carries the tag, and its real turn. */
async function seedRun(run: Run): Promise<void> {
  const run_key = `${run.cell}/${run.scenario}/${run.repetition}`;
  const id = await e2e.lab.createSession(`${EXPERIMENT} · ${run_key}`, {
    tool_invocation_mode: run.cell === DUAL_CELL ? "dual_agent" : "chat_agent_tools",
    chat_agent: { model: "sim" },
    experiment: {
      id: EXPERIMENT,
      suite: "Smoke suite",
      cell: run.cell,
      cell_label: run.cell,
      scenario: run.scenario,
      category: run.category,
      repetition: run.repetition,
      run_key,
      expect: run.expect,
    },
  });
  await e2e.lab.runTurn(id, run.message);
  sessions.set(run_key, id);
}

beforeAll(async () => {
  const search = "search for agent lab";
  for (const cell of [TOOLS_CELL, DUAL_CELL]) {
    for (const repetition of [1, 2]) {
      await seedRun({
        cell,
        scenario: "search",
        category: "simple",
        repetition,
        expect: [SEARCH],
        message: search,
      });
    }
    await seedRun({
      cell,
      scenario: "wrong-tool",
      category: "simple",
      repetition: 1,
      expect: [WRONG_TOOL],
      message: search,
    });
  }
  await seedRun({
    cell: TOOLS_CELL,
    scenario: "chit-chat",
    category: "irrelevance",
    repetition: 1,
    expect: [NO_TOOLS],
    message: "hello there",
  });
  // A run still going: counted as incomplete, listed without a score.
  const running = await e2e.lab.createSession("running run", {
    tool_invocation_mode: "dual_agent",
    experiment: {
      id: EXPERIMENT,
      suite: "Smoke suite",
      cell: DUAL_CELL,
      cell_label: DUAL_CELL,
      scenario: "chit-chat",
      category: "irrelevance",
      repetition: 1,
      run_key: `${DUAL_CELL}/chit-chat/1`,
      expect: [NO_TOOLS],
    },
  });
  e2e.lab.store.startTurn(running, { turn_index: 1, user_message: "hello there" });
});

async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  );
}

/** The text of each matrix cell of the row of `cell`, after its name. */
async function matrixRow(page: Page, cell: string): Promise<string[]> {
  const row = page.locator(`[data-testid="experiment-matrix"] tr[data-cell-id="${cell}"]`);
  return row.locator("td.success-cell").evaluateAll((cells) =>
    cells.map((element) => {
      const level = element.getAttribute("data-level");
      const rate = element.querySelector(".success-rate")?.textContent ?? "—";
      return `${rate} ${level}`;
    }),
  );
}

describe("experiments in chromium", () => {
  it("lists the experiment, shows its matrix, compares two cells and drills into a run", async () => {
    const { page, ...opened } = await newPage();
    await page.goto(e2e.lab.url);
    await page.getByRole("link", { name: "Experiments" }).click();
    await page.waitForURL(/\/experiments$/);
    const row = page.getByTestId("experiment-row");
    await row.waitFor({ state: "visible" });
    expect(await row.count()).toBe(1);
    expect(await row.getAttribute("data-experiment-id")).toBe(EXPERIMENT);
    expect(await row.textContent()).toContain("Smoke suite");
    // 7 scored runs plus the running one.
    expect(await row.locator("td.num").textContent()).toBe("8");
    await screenshot(page, "08-experiments-list");

    await row.getByRole("link", { name: "Smoke suite" }).click();
    await page.waitForURL(new RegExp(`/experiments/${EXPERIMENT}$`));
    const matrix = page.getByTestId("experiment-matrix");
    await matrix.waitFor({ state: "visible" });
    expect(await page.locator("h1").textContent()).toContain("Smoke suite");
    await page.getByTestId("simulated-note").waitFor({ state: "visible" });
    expect(await page.getByTestId("incomplete-note").textContent()).toMatch(
      /^1 run is not finished/,
    );

    const cells = page.getByTestId("experiment-cell");
    expect(await cells.allTextContents()).toStrictEqual([TOOLS_CELL, DUAL_CELL]);
    const headers = await matrix.locator("thead th").allTextContents();
    expect(headers.slice(2)).toStrictEqual(["All (95% CI)", "simple", "irrelevance"]);
    // Tools: 3 of 4 overall, 2 of 3 simple, 1 of 1 irrelevance. Dual: 2 of 3, irrelevance not run.
    expect(await matrixRow(page, TOOLS_CELL)).toStrictEqual(["75% good", "67% mid", "100% high"]);
    expect(await matrixRow(page, DUAL_CELL)).toStrictEqual(["67% mid", "67% mid", "— none"]);
    const metrics = page.getByTestId("experiment-metrics");
    expect(await metrics.locator("tbody tr").count()).toBe(2);

    // Two cells ticked: compared side by side with deltas.
    const checkboxes = page.getByTestId("cell-compare-checkbox");
    await checkboxes.nth(0).check();
    await checkboxes.nth(1).check();
    const compare = page.getByTestId("cell-compare");
    await compare.waitFor({ state: "visible" });
    const success = compare.locator('tr[data-metric="success_rate"]');
    expect(await success.getAttribute("data-verdict")).toBe("worse");
    expect(await success.locator("td").allTextContents()).toStrictEqual([
      "75.0%",
      "66.7%",
      "−8.3 pp",
      "−11.1% (worse)",
    ]);
    expect(new URL(page.url()).searchParams.getAll("compare")).toStrictEqual([
      TOOLS_CELL,
      DUAL_CELL,
    ]);

    // A cell's runs: the failed one first, with why; the link opens its session.
    await cells.nth(0).click();
    const runs = page.getByTestId("cell-runs");
    await runs.waitFor({ state: "visible" });
    await runs.locator('[data-testid="cell-run"]').first().waitFor({ state: "visible" });
    const runRows = runs.locator('[data-testid="cell-run"]');
    expect(await runRows.count()).toBe(4);
    expect(
      await runRows.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-outcome"))),
    ).toStrictEqual(["failed", "passed", "passed", "passed"]);
    expect(await runRows.first().textContent()).toMatch(/mock_ticket/);
    expect(new URL(page.url()).searchParams.get("cell")).toBe(TOOLS_CELL);
    expectCleanPage({ page, ...opened });
    await screenshot(page, "08-experiment");

    const failedSession = sessions.get(`${TOOLS_CELL}/wrong-tool/1`) ?? "";
    const link = runRows.first().getByTestId("cell-run-link");
    expect(await link.textContent()).toBe("wrong-tool");
    await link.click();
    await page.waitForURL(new RegExp(`/sessions/${failedSession}$`), { timeout: WAIT_MS });
    await page.getByTestId("message-input").waitFor({ state: "visible" });
    expect(await page.locator("h1").textContent()).toBe(
      `${EXPERIMENT} · ${TOOLS_CELL}/wrong-tool/1`,
    );

    // Back returns to the matrix with the cell still open.
    await page.goBack();
    await page.getByTestId("cell-runs").waitFor({ state: "visible" });
    // Closed from the keyboard, the panel gives the focus back to the configuration it showed.
    await page.getByTestId("cell-runs").getByRole("button", { name: "Close" }).focus();
    await page.keyboard.press("Enter");
    await page.getByTestId("cell-runs").waitFor({ state: "detached" });
    expect(
      await page.evaluate(
        `({ testid: document.activeElement && document.activeElement.getAttribute("data-testid"),
            row: document.activeElement && document.activeElement.closest("tr").getAttribute("data-cell-id") })`,
      ),
    ).toStrictEqual({ testid: "experiment-cell", row: TOOLS_CELL });
    expectCleanPage({ page, ...opened });
  });

  it("lists an unfinished run without a score, and fits a 400 px window", async () => {
    const { page, ...opened } = await newPage({ width: 400, height: 800 });
    const url = new URL(`/experiments/${EXPERIMENT}`, e2e.lab.origin);
    url.searchParams.set("cell", DUAL_CELL);
    url.searchParams.append("compare", DUAL_CELL);
    url.searchParams.append("compare", TOOLS_CELL);
    await page.goto(url.href);
    const runs = page.getByTestId("cell-runs");
    await runs.locator('[data-testid="cell-run"]').first().waitFor({ state: "visible" });
    const outcomes = await runs
      .locator('[data-testid="cell-run"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-outcome")));
    expect(outcomes).toStrictEqual(["failed", "incomplete", "passed", "passed"]);
    await page.getByTestId("cell-compare").waitFor({ state: "visible" });
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(1);
    // The cell names stay on screen while the matrix scrolls sideways.
    const button = page.getByTestId("experiment-cell").first();
    expect(await button.isVisible()).toBe(true);
    const box = await button.boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(400);
    await screenshot(page, "08-experiment-400");

    await page.getByRole("link", { name: "← Experiments" }).click();
    await page.getByTestId("experiment-row").waitFor({ state: "visible" });
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(1);
    expectCleanPage({ page, ...opened });
  });

  it("follows runs another process stores while its page is open, and the list says they arrive", async () => {
    const { page, ...opened } = await newPage();
    await page.goto(new URL(`/experiments/${EXPERIMENT}`, e2e.lab.origin).href);
    const facts = page.locator(".experiment-facts");
    await facts.waitFor({ state: "visible" });
    expect(await facts.textContent()).toContain("7 scored runs");
    expect(await page.getByTestId("outside-runs").count()).toBe(0);
    // A cell's runs, open while the run arrives: the list says it may be out of date.
    await page.locator(`tr[data-cell-id="${DUAL_CELL}"] button.cell-button`).click();
    const runs = page.getByTestId("cell-runs");
    const rows = runs.locator('[data-testid="cell-run"]');
    await rows.first().waitFor({ state: "visible" });
    expect(await rows.count()).toBe(4);
    expect(await page.getByTestId("cell-runs-outdated").count()).toBe(0);
    // A run stored through the API, as agent-lab bench against this database stores one: the
    // server started nothing, so no progress events come.
    await seedRun({
      cell: DUAL_CELL,
      scenario: "chit-chat",
      category: "irrelevance",
      repetition: 2,
      expect: [NO_TOOLS],
      message: "hello there",
    });
    await page.getByTestId("outside-runs").waitFor({ state: "visible", timeout: WAIT_MS });
    await page
      .locator(".experiment-facts", { hasText: "8 scored runs" })
      .waitFor({ state: "visible", timeout: WAIT_MS });
    const outdated = page.getByTestId("cell-runs-outdated");
    await outdated.waitFor({ state: "visible", timeout: WAIT_MS });
    await screenshot(page, "08-experiment-runs-outdated");
    // Not read again under the reader: the new run appears once asked for.
    expect(await rows.count()).toBe(4);
    await outdated.getByRole("button", { name: "Read again" }).click();
    await outdated.waitFor({ state: "detached" });
    await rows.nth(4).waitFor({ state: "visible" });
    expect(await rows.count()).toBe(5);
    await page.getByRole("link", { name: "← Experiments" }).click();
    await page.getByTestId("experiment-active").waitFor({ state: "visible" });
    expect(await page.getByTestId("experiment-running").count()).toBe(0);
    expectCleanPage({ page, ...opened });
  });
});
