/**
 * Compare that tells the truth (issue 15, part 2), in chromium: outcome rows before the metrics,
 * a session whose tool calls all failed is not the better one for using fewer tokens, repair rows
 * are n/a for chat_agent_tools and uncoloured, sim timings (all under a few ms) are not coloured
 * and say why, and the two transcripts are shown side by side.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { nextMillisecond } from "../next-millisecond.js";
import { expectCleanPage, requireChromium, screenshot, setUpLab } from "./harness.js";

requireChromium();

const e2e = setUpLab();

const MESSAGES = ["search for sqlite wal mode", "search for agent lab"];

async function session(title: string, config: Record<string, unknown>): Promise<string> {
  const id = await e2e.lab.createSession(title, config);
  for (const message of MESSAGES) await e2e.lab.runTurn(id, message);
  return id;
}

async function metricRow(page: Page, key: string) {
  const row = page.locator(`[data-testid="compare-table"] tr[data-metric="${key}"]`);
  const cells = await row.locator("td").allTextContents();
  return {
    verdict: await row.getAttribute("data-verdict"),
    a: cells[0],
    b: cells[1],
    note:
      (await row.getByTestId("delta-note").count()) > 0
        ? await row.getByTestId("delta-note").textContent()
        : null,
  };
}

describe("compare that tells the truth", () => {
  it("ranks outcomes first, marks rows a mode cannot have, colours only beyond the noise", async () => {
    // A: dual agent, its malformed calls repaired by the event agent; the tools work.
    const a = await session("E2E: repaired (dual agent)", {
      tool_invocation_mode: "dual_agent",
      chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
      event_agent: { model: "sim" },
      tools: ["mock_search"],
    });
    // B: chat agent tools, the same malformed calls sent back as errors; nothing repairs them.
    const b = await session("E2E: unrepaired (chat agent tools)", {
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
      tools: ["mock_search"],
    });
    const opened = await e2e.newPage();
    const { page } = opened;
    await page.goto(`${e2e.lab.origin}/compare?a=${a}&b=${b}`);
    await page.getByTestId("compare-table").waitFor();

    const keys = await page
      .locator('[data-testid="compare-table"] tbody tr')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-metric")));
    expect(keys.slice(0, 6)).toEqual([
      "turns_completed",
      "turns_not_completed",
      "turns_all_tools_failed",
      "tool_errors",
      "fallbacks_ok",
      "fallbacks_failed",
    ]);
    expect(await metricRow(page, "turns_completed")).toMatchObject({
      a: "2",
      b: "2",
      verdict: "same",
    });
    const allFailed = await metricRow(page, "turns_all_tools_failed");
    expect(allFailed).toMatchObject({ a: "0", verdict: "worse" });
    expect(Number(allFailed.b)).toBeGreaterThan(0);
    expect(await metricRow(page, "tool_errors")).toMatchObject({ a: "0", verdict: "worse" });

    for (const key of ["fallbacks", "fallbacks_ok", "fallbacks_failed"]) {
      const row = await metricRow(page, key);
      expect(row).toMatchObject({
        b: "n/a",
        verdict: "not_applicable",
        note: "chat_agent_tools has no event agent, so no argument repairs",
      });
    }
    expect(Number((await metricRow(page, "fallbacks_ok")).a)).toBeGreaterThan(0);
    // Not coloured: the class names no verdict colour.
    const naCell = page.locator('tr[data-metric="fallbacks"] td').nth(2);
    expect(await naCell.getAttribute("class")).not.toMatch(/delta-(better|worse)/);

    // The sim answers in a few ms: its TTFT difference is no finding.
    const ttft = await metricRow(page, "mean_ttft_ms");
    const ttftA = Number.parseFloat(ttft.a ?? "");
    const ttftB = Number.parseFloat(ttft.b ?? "");
    if (ttftA < 5 && ttftB < 5) {
      // Both under the floor: never coloured, and said why when they differ at all.
      expect(["noise", "same"]).toContain(ttft.verdict);
      if (ttft.verdict === "noise") expect(ttft.note).toBe("both under 5 ms");
    } else if (ttft.verdict === "noise") {
      expect(ttft.note).toMatch(/^within the spread \(±/);
    }
    const ttftCell = page.locator('tr[data-metric="mean_ttft_ms"] td').nth(2);
    if (ttft.verdict === "noise") {
      expect(await ttftCell.getAttribute("class")).not.toMatch(/delta-(better|worse)/);
    }

    // The per-turn tables say what each turn achieved.
    const statusesB = await page
      .getByTestId("compare-side-b")
      .getByTestId("compare-turn-status")
      .allTextContents();
    expect(statusesB.every((status) => /failed/.test(status))).toBe(true);

    // Both transcripts, turn by turn, side by side.
    const rows = page.getByTestId("compare-transcript-row");
    expect(await rows.count()).toBe(MESSAGES.length);
    const first = rows.first();
    const cellA = await first.locator('[data-side="a"]').boundingBox();
    const cellB = await first.locator('[data-side="b"]').boundingBox();
    expect(cellA && cellB && cellB.x > cellA.x + cellA.width - 1).toBe(true);
    expect(await first.locator('[data-side="a"] [data-testid="user-message"]').textContent()).toBe(
      `You${MESSAGES[0]}`,
    );
    expect(
      await first.locator('[data-side="b"] [data-testid="turn-outcome"]').getAttribute("data-tone"),
    ).toBe("warn");
    await screenshot(page, "daily-06-compare-truth");
    expectCleanPage(opened);
  });
});

describe("the compare page's pickers", () => {
  it("find a session older than the 100 offered by its title, and name a chosen one as the others", async () => {
    const needle = await e2e.lab.createSession("E2E: the needle, made first", {
      tool_invocation_mode: "chat_agent_tools",
    });
    // The fillers are all newer: in the needle's own millisecond one would tie with it, and the
    // tie goes by the (random) ids, which could offer the needle among the 100 most recent.
    nextMillisecond();
    for (let index = 0; index < 100; index++) {
      await e2e.lab.createSession(`E2E: filler ${index}`, {});
    }
    const opened = await e2e.newPage();
    const { page } = opened;
    await page.goto(new URL("/compare", e2e.lab.origin).href);
    const options = page.getByTestId("compare-select-a").locator("option");
    await expect.poll(() => options.count()).toBe(101);
    expect(await options.allTextContents()).not.toContain(
      "E2E: the needle, made first · chat_agent_tools · sim",
    );
    await page.getByTestId("compare-search").fill("needle");
    await expect
      .poll(() => options.allTextContents())
      .toStrictEqual([
        "— choose a session —",
        "E2E: the needle, made first · chat_agent_tools · sim",
      ]);
    await page.getByTestId("compare-select-a").selectOption(needle);
    await page.waitForURL((url) => url.searchParams.get("a") === needle);
    // Searched away from, the chosen session is still named as the offered ones are.
    await page.getByTestId("compare-search").fill("filler 7");
    await expect
      .poll(() => options.first().locator("xpath=following-sibling::option[1]").textContent())
      .toBe("E2E: the needle, made first · chat_agent_tools · sim");
    await screenshot(page, "15-compare-picker-search");
    expectCleanPage(opened);
  });
});
