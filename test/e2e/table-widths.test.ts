/**
 * Issue 15 part 5: the Sessions and Compare tables fit a 1280 px window without scrolling sideways
 * (the sessions table also at 1400 px, beside the new-session form, and at 800 px: its Delete
 * buttons were cut off at both), and at 400 px the page itself does not scroll sideways (a table may, inside its own box) and every
 * row's title stays readable. Screenshots: test-artifacts/screenshots/15-widths-*.png.
 */
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, requireChromium, screenshot, setUpLab } from "./harness.js";

requireChromium();

const e2e = setUpLab();
const ids: string[] = [];

beforeAll(async () => {
  for (const [index, title] of [
    "Weather in Lisbon and a ticket for the flaky nightly build that keeps failing",
    "Billing question",
  ].entries()) {
    const id = await e2e.lab.createSession(title, {
      tool_invocation_mode: index === 0 ? "dual_agent" : "chat_agent_tools",
      chat_agent: { model: index === 0 ? "sim" : "sim:a-rather-long-model-name-v2" },
      tags: ["alpha", "nightly"],
    });
    await e2e.lab.runTurn(id, "search for agent lab");
    ids.push(id);
  }
});

/** How far `selector`'s box is wider than its visible width (0 when it fits), and the page's. */
async function overflow(page: Page, selector: string): Promise<{ box: number; page: number }> {
  // A string, as the harness evaluates: the test's own types have no DOM.
  return page.evaluate<{ box: number; page: number }>(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    const root = document.documentElement;
    return {
      box: element ? element.scrollWidth - element.clientWidth : -1,
      page: root.scrollWidth - root.clientWidth,
    };
  })()`);
}

describe.each([
  { width: 1400, tableFits: true },
  { width: 1280, tableFits: true },
  { width: 800, tableFits: true },
  { width: 400, tableFits: false },
])("sessions at $width px", ({ width, tableFits }) => {
  it("the sessions table fits (or scrolls inside its box), the page never sideways", async () => {
    const { page, ...opened } = await e2e.newPage({ width, height: 900 });
    await page.goto(e2e.lab.url);
    await page.getByTestId("sessions-table").waitFor({ state: "visible" });
    const sizes = await overflow(page, ".sessions-list .table-scroll");
    expect(sizes.page).toBe(0);
    // -1 would mean the box is not there at all: the test must measure something.
    expect(sizes.box).toBeGreaterThanOrEqual(0);
    if (tableFits) expect(sizes.box).toBe(0);
    // A title is never squeezed to a sliver: it keeps a readable width.
    const title = await page.locator(".sessions-table .title-cell").first().boundingBox();
    expect(title?.width ?? 0).toBeGreaterThanOrEqual(140);
    await screenshot(page, `15-widths-sessions-${width}`);
    expectCleanPage({ page, ...opened });
  });
});

describe.each([
  { width: 1280, tableFits: true },
  { width: 400, tableFits: false },
])("compare at $width px", ({ width, tableFits }) => {
  it("the compare page's tables fit (or scroll inside their box), the page never sideways", async () => {
    const { page, ...opened } = await e2e.newPage({ width, height: 900 });
    await page.goto(new URL(`/compare?a=${ids[0]}&b=${ids[1]}`, e2e.lab.origin).href);
    await page.locator(".compare-metrics table").first().waitFor({ state: "visible" });
    const sizes = await overflow(page, ".compare-metrics .table-scroll");
    const side = await overflow(page, ".compare-sides .table-scroll");
    expect(sizes.page).toBe(0);
    expect([sizes.box, side.box].every((box) => box >= 0)).toBe(true);
    // The metrics and each session's turn table both fit at 1280 px.
    if (tableFits) expect([sizes.box, side.box]).toStrictEqual([0, 0]);
    await screenshot(page, `15-widths-compare-${width}`);
    expectCleanPage({ page, ...opened });
  });
});
