/**
 * Experiments started from the web UI, in chromium against the lab's server on 127.0.0.1 with the
 * simulated model: a suite picked from the server's folder, configurations and repetitions chosen,
 * its progress followed to the end, the Sessions list left as it was, one scenario's runs side by
 * side, and a slow experiment cancelled mid-run (a second start of it refused meanwhile).
 * Screenshots: test-artifacts/screenshots/14-experiment-*.png.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, requireChromium, screenshot, setUpLab, WAIT_MS } from "./harness.js";

requireChromium();

/** An experiment on the simulated model ends in seconds; a busy machine gets some slack. */
const RUN_MS = 90_000;
/** A whole test: an experiment's run plus the pages around it. */
const TEST_MS = 180_000;

const SCENARIOS = `
scenarios:
  - id: search
    category: simple
    description: A search the simulated model gets right.
    turns:
      - user: search for agent lab
        expect:
          tools:
            - name: mock_search
              arguments:
                query: { contains: agent lab }
  - id: wrong-tool
    category: simple
    description: Expects a ticket where the model searches, so every run fails.
    turns:
      - user: search for agent lab
        expect:
          tools:
            - name: mock_ticket
`;

const QUICK = `name: ui-quick
description: Two scenarios in both modes.
config:
  tools: [mock_search, mock_ticket]
  max_rounds: 4
matrix:
  modes: [chat_agent_tools, dual_agent]
  chat_models: [sim]
repetitions: 3
concurrency: 2
${SCENARIOS}`;

/** Slow enough to be caught running: each answer takes a few seconds to stream. */
const SLOW = `name: ui-slow
description: One mode, a slowly streaming model, one run at a time.
config:
  tools: [mock_search, mock_ticket]
  max_rounds: 4
  chat_agent: { options: { first_token_ms: 400, tokens_per_second: 15 } }
matrix:
  modes: [chat_agent_tools]
  chat_models: [sim]
repetitions: 6
concurrency: 1
${SCENARIOS}`;

const suitesDir = mkdtempSync(join(tmpdir(), "agent-lab-ui-suites-"));
writeFileSync(join(suitesDir, "quick.yaml"), QUICK);
writeFileSync(join(suitesDir, "slow.yaml"), SLOW);

const e2e = setUpLab({ suitesDirs: [suitesDir] });
afterAll(() => rmSync(suitesDir, { recursive: true, force: true }));
const { newPage } = e2e;
let ordinarySession = "";

beforeAll(async () => {
  ordinarySession = await e2e.lab.createSession("An ordinary session", {
    tool_invocation_mode: "chat_agent_tools",
    chat_agent: { model: "sim" },
    tools: ["mock_search"],
  });
});

async function openForm(page: Page, suite: string): Promise<void> {
  await page.goto(new URL("/experiments", e2e.lab.origin).href);
  await page.getByTestId("new-experiment").click();
  await page.getByTestId("new-experiment-form").waitFor({ state: "visible" });
  const select = page.getByTestId("suite-select");
  const value = await select.locator("option", { hasText: suite }).getAttribute("value");
  await select.selectOption(value ?? suite);
  await expect.poll(() => page.getByTestId("suite-facts").textContent()).toMatch(/2 scenarios/);
}

const phase = (page: Page, name: string, timeout = RUN_MS) =>
  page
    .locator(`[data-testid="experiment-progress"][data-phase="${name}"]`)
    .waitFor({ state: "visible", timeout });

const sessionRows = (page: Page) => page.getByTestId("session-row");

describe("experiments started from the web UI", () => {
  it(
    "starts a suite, follows it to the end, and leaves the Sessions list alone",
    async () => {
      const opened = await newPage();
      const { page } = opened;
      await openForm(page, "ui-quick");
      const cells = page.getByTestId("suite-cell");
      expect(await cells.count()).toBe(2);
      expect([await cells.nth(0).isChecked(), await cells.nth(1).isChecked()]).toStrictEqual([
        true,
        true,
      ]);
      expect(await page.getByTestId("suite-repetitions").inputValue()).toBe("3");
      await page.getByTestId("suite-repetitions").fill("2");
      expect(await page.getByTestId("suite-run-count").textContent()).toMatch(/^8 runs/);
      // No configuration ticked: nothing to start.
      await cells.nth(0).uncheck();
      await cells.nth(1).uncheck();
      expect(await page.getByTestId("start-experiment").isDisabled()).toBe(true);
      await cells.nth(0).check();
      await cells.nth(1).check();
      await screenshot(page, "14-experiment-new-form");

      await page.getByTestId("start-experiment").click();
      await page.waitForURL(/\/experiments\/[^/?]+$/, { timeout: WAIT_MS });
      const id = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
      // Followed to its end, or (the simulated model is quick) ended before the page connected.
      await phase(page, "done");
      expect(await page.getByTestId("experiment-progress-summary").textContent()).toBe(
        "8 of 8 runs",
      );
      // The report followed the runs: both configurations, every run scored.
      await expect
        .poll(() => page.locator(".experiment-facts").textContent(), { timeout: WAIT_MS })
        .toMatch(/2 configurations · 8 scored runs/);
      expect(await page.getByTestId("experiment-cell").count()).toBe(2);
      await screenshot(page, "14-experiment-done");

      // One scenario side by side: both configurations, two failed runs each, and why.
      await page.getByTestId("scenario-select").selectOption("wrong-tool");
      await page.waitForURL((url) => url.searchParams.get("scenario") === "wrong-tool");
      const matrix = page.getByTestId("scenario-matrix");
      await matrix.waitFor({ state: "visible" });
      expect(await matrix.getByTestId("scenario-cell").count()).toBe(2);
      expect(await matrix.getByTestId("scenario-cell").allTextContents()).toStrictEqual([
        expect.stringMatching(/chat_agent_tools.*0 of 2 passed$/),
        expect.stringMatching(/dual_agent.*0 of 2 passed$/),
      ]);
      const runs = matrix.getByTestId("scenario-run");
      expect(await runs.count()).toBe(4);
      expect(
        await runs.evaluateAll((cards) => cards.map((card) => card.getAttribute("data-outcome"))),
      ).toStrictEqual(["failed", "failed", "failed", "failed"]);
      const first = runs.first();
      expect(await first.getByTestId("scenario-failures").textContent()).toMatch(/mock_ticket/);
      expect(await first.getByTestId("scenario-calls").textContent()).toMatch(
        /mock_search\(\{"query":"[^"]*agent lab[^"]*"/i,
      );
      expect((await first.getByTestId("scenario-answer").textContent())?.length).toBeGreaterThan(0);
      await screenshot(page, "14-experiment-scenario");

      await page.getByTestId("scenario-select").selectOption("search");
      await expect
        .poll(() =>
          runs.evaluateAll((cards) => cards.map((card) => card.getAttribute("data-outcome"))),
        )
        .toStrictEqual(["passed", "passed", "passed", "passed"]);

      // A run's session opens from its card.
      await runs.first().getByTestId("scenario-run-link").click();
      await page.waitForURL(/\/sessions\//);
      await page.getByTestId("message-input").waitFor({ state: "visible" });

      // The list has it, not running; the Sessions list shows only the ordinary session.
      await page.goto(new URL("/experiments", e2e.lab.origin).href);
      const row = page.locator(`[data-testid="experiment-row"][data-experiment-id="${id}"]`);
      await row.waitFor({ state: "visible" });
      expect(await row.getByTestId("experiment-running").count()).toBe(0);
      await page.goto(new URL("/", e2e.lab.origin).href);
      await expect.poll(() => sessionRows(page).count(), { timeout: WAIT_MS }).toBe(1);
      expect(await sessionRows(page).getAttribute("data-session-id")).toBe(ordinarySession);
      await page.getByTestId("filter-include-experiments").check();
      await expect.poll(() => sessionRows(page).count(), { timeout: WAIT_MS }).toBe(9);
      expectCleanPage(opened);
    },
    TEST_MS,
  );

  it("shows a scenario the experiment never ran, and an unknown experiment, plainly", async () => {
    const opened = await newPage();
    const { page } = opened;
    const list = await e2e.lab.api<{ experiments: { id: string; suite: string }[] }>(
      "/api/experiments",
    );
    const quick = list.experiments.find((item) => item.suite === "ui-quick");
    if (!quick) throw new Error("the first test's experiment is missing");
    await page.goto(
      new URL(`/experiments/${encodeURIComponent(quick.id)}?scenario=nope`, e2e.lab.origin).href,
    );
    await page.getByTestId("scenario-missing").waitFor({ state: "visible" });
    // It ended in this server a moment ago: the server still tells how, and there is no Cancel.
    await phase(page, "done", WAIT_MS);
    expect(await page.getByTestId("experiment-cancel").count()).toBe(0);
    await page.goto(new URL("/experiments/no-such-experiment", e2e.lab.origin).href);
    await page.getByText("No run carries the experiment").waitFor({ state: "visible" });
    expect(opened.blocked).toEqual([]);
  });

  it(
    "shows a running experiment as running, refuses a second start, and cancels it",
    async () => {
      const opened = await newPage();
      const { page } = opened;
      await openForm(page, "ui-slow");
      expect(await page.getByTestId("suite-run-count").textContent()).toMatch(/^12 runs/);
      await page.getByTestId("start-experiment").click();
      await page.waitForURL(/\/experiments\/[^/?]+$/, { timeout: WAIT_MS });
      const id = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
      await phase(page, "running", WAIT_MS);
      await expect
        .poll(() => page.getByTestId("experiment-progress-summary").textContent())
        .toMatch(/^0 of 12 runs · 1 running$/);
      // A run ends (a few seconds each): counted, named, and the report appears.
      await expect
        .poll(() => page.getByTestId("experiment-progress-summary").textContent(), {
          timeout: RUN_MS,
        })
        .toMatch(/^[1-9]\d* of 12 runs · 1 running$/);
      expect(await page.getByTestId("experiment-progress-last").textContent()).toMatch(
        /^Last run: chat_agent_tools · sim · sim\/(search|wrong-tool)\/\d (passed|did not pass)$/,
      );
      await page.getByTestId("experiment-matrix").waitFor({ state: "visible", timeout: WAIT_MS });
      await screenshot(page, "14-experiment-running");

      // Elsewhere: the list says running, and starting it again is refused with the server's word.
      const other = await newPage();
      await openForm(other.page, "ui-slow");
      await other.page.getByTestId("start-experiment").click();
      await other.page.getByRole("alert").waitFor({ state: "visible" });
      expect(await other.page.getByRole("alert").textContent()).toMatch(
        /Could not start the experiment:.*already running/,
      );
      await other.page.goto(new URL("/experiments", e2e.lab.origin).href);
      const row = other.page.locator(`[data-testid="experiment-row"][data-experiment-id="${id}"]`);
      await row.getByTestId("experiment-running").waitFor({ state: "visible" });
      await screenshot(other.page, "14-experiment-list-running");

      await page.getByTestId("experiment-cancel").click();
      await phase(page, "cancelled", WAIT_MS);
      const summary = (await page.getByTestId("experiment-progress-summary").textContent()) ?? "";
      const done = Number(/^(\d+) of 12 runs/.exec(summary)?.[1]);
      expect(done).toBeLessThan(12);
      expect(await page.getByTestId("experiment-cancel").count()).toBe(0);
      await screenshot(page, "14-experiment-cancelled");

      // Nothing runs any more: the list says so, and the Sessions list still shows one session.
      await other.page.reload();
      await row.waitFor({ state: "visible" });
      expect(await row.getByTestId("experiment-running").count()).toBe(0);
      await other.page.goto(new URL("/", e2e.lab.origin).href);
      await expect.poll(() => sessionRows(other.page).count(), { timeout: WAIT_MS }).toBe(1);
      expectCleanPage(opened);
      // The refused start is a 409 the browser logs as a failed load: only escapes are checked.
      expect(other.blocked).toEqual([]);
    },
    TEST_MS,
  );
});
