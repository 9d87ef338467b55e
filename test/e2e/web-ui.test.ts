/**
 * The web UI in a real browser (Debian's chromium through playwright-core) against the lab's
 * server on 127.0.0.1, over a fresh SQLite file. Each scenario asserts what a person would see and
 * saves a screenshot to test-artifacts/screenshots/<name>.png.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { completionStream, FakeOpenAIServer, streamReply } from "../fake-openai-server.js";
import {
  expectCleanPage,
  openSession,
  requireChromium,
  screenshot,
  sendMessage,
  setUpLab,
  WAIT_MS,
  waitForTurnStatus,
} from "./harness.js";

// Checked as the file loads, so a missing browser fails the file (counted as a failure by every
// reporter) rather than marking its tests skipped.
requireChromium();

interface StoredTurn {
  turn_index: number;
  status: string;
}

const e2e = setUpLab();
const { newPage } = e2e;

async function storedTurns(sessionId: string): Promise<StoredTurn[]> {
  const body = await e2e.lab.api<{ turns: StoredTurn[] }>(
    `/api/sessions/${encodeURIComponent(sessionId)}`,
  );
  return body.turns;
}

/** Whether the page is wider than its window (a horizontal scrollbar on the whole page). */
async function horizontalOverflow(
  page: Page,
): Promise<{ scrollWidth: number; clientWidth: number }> {
  return page.evaluate<{ scrollWidth: number; clientWidth: number }>(
    "({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })",
  );
}

/** Sums the numeric `height` attributes of the matched SVG rects. */
async function totalHeight(page: Page, selector: string): Promise<number> {
  const heights = await page
    .locator(selector)
    .evaluateAll((elements) =>
      elements.map((element) => Number(element.getAttribute("height") ?? 0)),
    );
  return heights.reduce((sum, height) => sum + height, 0);
}

const TWO_TOOLS_MESSAGE = "search for agent lab and file a ticket about flaky tests";

describe("the web UI in chromium", () => {
  it("creates a session with the form and streams a dual_agent turn with two tool cards", async () => {
    const { page, ...opened } = await newPage();
    await page.goto(e2e.lab.url);
    const form = page.getByTestId("new-session-form");
    await form.waitFor({ state: "visible" });

    await page.getByTestId("new-session-title").fill("E2E: search then ticket");
    await page.getByTestId("new-session-mode").selectOption("dual_agent");
    await page.getByTestId("new-session-chat-model").fill("sim");
    await page.getByTestId("new-session-event-model").fill("sim");
    await form.getByText("Simulated model options").click();
    await form.getByLabel("Realistic timing", { exact: false }).check();
    await page.getByTestId("create-session").click();

    await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: WAIT_MS });
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
    await page.getByTestId("message-input").waitFor({ state: "visible" });
    expect(await page.locator("h1").textContent()).toBe("E2E: search then ticket");

    // The form sent what it showed: the mode, the sim models and the realistic timing.
    const detail = await e2e.lab.api<{
      session: { config: Record<string, { model?: string; options?: unknown }> };
    }>(`/api/sessions/${encodeURIComponent(sessionId)}`);
    expect(detail.session.config).toMatchObject({
      tool_invocation_mode: "dual_agent",
      chat_agent: { model: "sim", options: { first_token_ms: 300, tokens_per_second: 80 } },
      event_agent: { model: "sim", options: { first_token_ms: 300, tokens_per_second: 80 } },
    });

    // Sample the status line and the assistant's text every 20 ms while the turn runs.
    await page.evaluate(`(() => {
      window.__samples = [];
      const read = () => {
        const status = document.querySelector('[data-testid="turn-status"]');
        let text = 0;
        for (const element of document.querySelectorAll('[data-testid="assistant-message"]')) {
          text += element.textContent.length;
        }
        window.__samples.push({ status: status ? status.getAttribute("data-status") : null, text });
      };
      window.__sampler = setInterval(read, 20);
    })()`);
    await sendMessage(page, TWO_TOOLS_MESSAGE);
    await page.getByTestId("stop-button").waitFor({ state: "visible" });
    // Filing a ticket waits for the user's approval.
    await page.getByTestId("approve-button").click({ timeout: WAIT_MS });
    await waitForTurnStatus(page, "completed");
    const samples = await page.evaluate<{ status: string | null; text: number }[]>(
      "(() => { clearInterval(window.__sampler); return window.__samples; })()",
    );

    const whileRunning = samples.filter((sample) => sample.status === "running");
    const textWhileRunning = whileRunning.filter((sample) => sample.text > 0);
    // Text was on screen before the status line said completed, and it grew as it streamed.
    expect(textWhileRunning.length).toBeGreaterThan(0);
    const lengths = new Set(textWhileRunning.map((sample) => sample.text));
    expect(lengths.size).toBeGreaterThanOrEqual(3);
    const firstText = samples.findIndex((sample) => sample.text > 0);
    const firstCompleted = samples.findIndex((sample) => sample.status === "completed");
    expect(firstText).toBeGreaterThanOrEqual(0);
    expect(firstCompleted === -1 || firstText < firstCompleted).toBe(true);

    // The stored turn: the user's message, the answer, two tool cards with names and arguments.
    await expect
      .poll(() => page.getByTestId("user-message").textContent())
      .toContain(TWO_TOOLS_MESSAGE);
    const cards = page.getByTestId("tool-card");
    await expect.poll(() => cards.count(), { timeout: WAIT_MS }).toBe(2);
    expect(await cards.nth(0).getAttribute("data-tool-name")).toBe("mock_search");
    expect(await cards.nth(1).getAttribute("data-tool-name")).toBe("mock_ticket");
    expect(await cards.nth(0).locator(".tool-card-name").textContent()).toBe("mock_search");
    expect(await cards.nth(1).locator(".tool-card-name").textContent()).toBe("mock_ticket");
    expect(await cards.nth(0).locator(".tool-card-preview").textContent()).toContain(
      '"query":"agent lab"',
    );
    expect(await cards.nth(1).locator(".tool-card-preview").textContent()).toContain(
      '"title":"flaky tests"',
    );
    for (const state of await cards.evaluateAll((elements) =>
      elements.map((element) => element.getAttribute("data-state")),
    )) {
      expect(state).toBe("ok");
    }
    // Opening a card shows its arguments and result.
    await cards.nth(0).locator(".tool-card-header").click();
    await cards.nth(0).locator(".tool-card-body").waitFor({ state: "visible" });
    expect(await cards.nth(0).locator(".tool-card-body").textContent()).toContain("agent lab");

    const answer = page.getByTestId("assistant-message").last();
    expect(await answer.textContent()).toContain("mock_search found 3 results");
    await page.getByTestId("simulated-badge").first().waitFor({ state: "visible" });
    expect(await page.getByTestId("turn-status").textContent()).toContain("completed");

    await screenshot(page, "01-dual-agent-turn");
    expectCleanPage({ page, ...opened });
  });

  it("approves one ticket with edited arguments and denies another, from the tool card", async () => {
    const sessionId = await e2e.lab.createSession("E2E: approvals", {
      tool_invocation_mode: "chat_agent_tools",
    });
    const { page, ...opened } = await newPage();
    await openSession(page, e2e.lab, sessionId);

    await sendMessage(page, "file a ticket about flaky tests");
    const panel = page.getByTestId("approval-panel");
    await panel.waitFor({ state: "visible", timeout: WAIT_MS });
    const waiting = page.getByTestId("tool-card").first();
    expect(await waiting.getAttribute("data-state")).toBe("approval");
    expect(await page.getByTestId("approval-arguments").inputValue()).toContain('"flaky tests"');
    // The API lists the same call as waiting.
    const pending = await e2e.lab.api<{ approvals: { event_name: string }[] }>(
      `/api/sessions/${encodeURIComponent(sessionId)}/approvals`,
    );
    expect(pending.approvals.map((approval) => approval.event_name)).toEqual(["mock_ticket"]);
    // Invalid JSON is refused in the page, before anything is sent.
    await page.getByTestId("approval-arguments").fill("{ not json");
    await page.getByTestId("approve-button").click();
    await page.getByTestId("approval-error").waitFor({ state: "visible" });
    await page
      .getByTestId("approval-arguments")
      .fill('{ "title": "flaky tests (edited)", "priority": "high" }');
    await screenshot(page, "04-approval-pending");
    await page.getByTestId("approve-button").click();
    await waitForTurnStatus(page, "completed");
    const approved = page.getByTestId("tool-card").first();
    await expect.poll(() => approved.getAttribute("data-state"), { timeout: WAIT_MS }).toBe("ok");
    expect(await approved.locator(".tool-card-preview").textContent()).toContain("(edited)");
    // The stored card keeps the decision (from the audit), not only the live one.
    expect(await approved.getByTestId("approval-badge").textContent()).toBe("approved by user");

    await sendMessage(page, "file a ticket about slow builds");
    await panel.waitFor({ state: "visible", timeout: WAIT_MS });
    await page.getByTestId("approval-reason").fill("we track builds elsewhere");
    await page.getByTestId("deny-button").click();
    await waitForTurnStatus(page, "completed");
    const denied = page.getByTestId("tool-card").last();
    await expect.poll(() => denied.getAttribute("data-state"), { timeout: WAIT_MS }).toBe("error");
    expect(await denied.getByTestId("approval-badge").textContent()).toBe("denied by user");
    await denied
      .locator(".tool-card-header")
      .click()
      .catch(() => {});
    await screenshot(page, "05-approval-denied");

    const audit = await e2e.lab.api<{
      audit: { event: string; details: Record<string, unknown> }[];
    }>(`/api/sessions/${encodeURIComponent(sessionId)}/audit`);
    expect(
      audit.audit
        .filter((row) => row.event === "approval_decided")
        .map((row) => [row.details.decision, row.details.decided_by, row.details.reason]),
    ).toEqual([
      ["approve", "user", null],
      ["deny", "user", "we track builds elsewhere"],
    ]);
    const messages = await e2e.lab.api<{ messages: { role: string; content: string }[] }>(
      `/api/sessions/${encodeURIComponent(sessionId)}/messages`,
    );
    const replies = messages.messages.filter((message) => message.role === "tool");
    expect(replies[0]?.content).toContain("flaky tests (edited)");
    expect(replies[1]?.content).toContain("the user denied this call: we track builds elsewhere");
    expectCleanPage({ page, ...opened });
  });

  it("marks a tool card whose arguments the event agent repaired with a fallback badge", async () => {
    const sessionId = await e2e.lab.createSession("E2E: malformed arguments", {
      tool_invocation_mode: "dual_agent",
      chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
      event_agent: { model: "sim" },
    });
    const { page, ...opened } = await newPage();
    await openSession(page, e2e.lab, sessionId);
    await sendMessage(page, "search for agent lab");
    await waitForTurnStatus(page, "completed");

    const card = page.getByTestId("tool-card").first();
    await card.waitFor({ state: "visible" });
    expect(await card.getAttribute("data-tool-name")).toBe("mock_search");
    await card.getByTestId("fallback-badge").waitFor({ state: "visible" });
    expect(await card.getByTestId("fallback-badge").textContent()).toBe("fallback");
    // The card's body tells what the chat agent wrote and what the event agent made of it.
    await card.locator(".tool-card-header").click();
    const body = card.locator(".tool-card-body");
    await body.waitFor({ state: "visible" });
    expect(await body.textContent()).toContain("Argument fallback");
    expect(await body.textContent()).toContain('"query": "agent lab"');

    // A reload draws the same from the stored record.
    await page.reload();
    await page.getByTestId("tool-card").first().getByTestId("fallback-badge").waitFor({
      state: "visible",
    });
    await screenshot(page, "02-fallback-badge");
    expectCleanPage({ page, ...opened });
  });

  it("draws the usage tab: tokens, timing and waterfall charts and the per-turn table", async () => {
    const sessionId = await e2e.lab.createSession("E2E: usage charts", {
      tool_invocation_mode: "dual_agent",
      chat_agent: {
        model: "sim",
        options: { first_token_ms: 40, tokens_per_second: 600, malformed_arguments_rate: 0.5 },
      },
      event_agent: { model: "sim", options: { first_token_ms: 20 } },
    });
    await e2e.lab.runTurn(sessionId, TWO_TOOLS_MESSAGE);
    await e2e.lab.runTurn(sessionId, "search for sqlite wal mode");

    const { page, ...opened } = await newPage({ width: 1280, height: 900 });
    await openSession(page, e2e.lab, sessionId);
    await page.getByTestId("tab-usage").click();
    expect(await page.getByTestId("tab-usage").getAttribute("aria-selected")).toBe("true");

    const table = page.getByTestId("usage-table");
    await table.waitFor({ state: "visible" });
    expect(await table.locator("tbody tr").count()).toBe(2);
    const firstRow = await table.locator("tbody tr").first().locator("th, td").allTextContents();
    expect(firstRow[0]).toBe("1");
    expect(Number((firstRow[4] ?? "").replace(/[^0-9]/g, ""))).toBeGreaterThan(0); // total tokens
    expect(await table.locator("tfoot tr th").textContent()).toBe("Session");

    for (const chart of ["chart-tokens", "chart-timing", "chart-waterfall"]) {
      await page.getByTestId(chart).locator("svg").waitFor({ state: "visible" });
    }
    // Bars: stacked token bars, two timing bars per turn, one waterfall bar per call.
    const tokenBars = '[data-testid="chart-tokens"] svg rect[class^="series-"]';
    expect(await page.locator(tokenBars).count()).toBeGreaterThanOrEqual(4);
    expect(await totalHeight(page, tokenBars)).toBeGreaterThan(10);
    const timingBars = '[data-testid="chart-timing"] svg rect[class^="series-"]';
    expect(await page.locator(timingBars).count()).toBeGreaterThanOrEqual(4);
    expect(await totalHeight(page, timingBars)).toBeGreaterThan(10);
    const waterfall = page.getByTestId("chart-waterfall");
    expect(await waterfall.locator("svg rect.series-chat").count()).toBeGreaterThanOrEqual(2);
    expect(await waterfall.locator("svg rect.series-tool").count()).toBeGreaterThanOrEqual(1);
    expect(await waterfall.locator("svg .row-label").count()).toBeGreaterThanOrEqual(3);
    // The waterfall shows the last turn and switches to another.
    expect(await waterfall.getByTestId("waterfall-turn").inputValue()).toBe("2");
    await waterfall.getByTestId("waterfall-turn").selectOption("1");
    await expect.poll(() => waterfall.locator("h3").textContent()).toBe("Call waterfall, turn 1");
    expect(await waterfall.locator("svg rect.series-tool").count()).toBeGreaterThanOrEqual(2);

    await screenshot(page, "03-usage-tab-1280");
    expectCleanPage({ page, ...opened });
  });

  it("compares two sessions, one per mode, in a table of metrics with deltas", async () => {
    const dual = await e2e.lab.createSession("E2E compare: dual agent", {
      tool_invocation_mode: "dual_agent",
    });
    const native = await e2e.lab.createSession("E2E compare: native tools", {
      tool_invocation_mode: "chat_agent_tools",
    });
    await e2e.lab.runTurn(dual, TWO_TOOLS_MESSAGE);
    await e2e.lab.runTurn(native, TWO_TOOLS_MESSAGE);

    const { page, ...opened } = await newPage();
    await page.goto(e2e.lab.url);
    const row = (id: string) =>
      page.locator(`[data-testid="session-row"][data-session-id="${id}"]`);
    await row(native).waitFor({ state: "visible" });
    await row(dual).getByTestId("compare-checkbox").check();
    await row(native).getByTestId("compare-checkbox").check();
    await page.getByTestId("compare-selected").click();

    await page.waitForURL(/\/compare\?/, { timeout: WAIT_MS });
    const query = new URL(page.url()).searchParams;
    expect([query.get("a"), query.get("b")]).toEqual([dual, native]);
    expect(await page.getByTestId("compare-select-a").inputValue()).toBe(dual);
    expect(await page.getByTestId("compare-select-b").inputValue()).toBe(native);

    const table = page.getByTestId("compare-table");
    await table.waitFor({ state: "visible" });
    const rows = table.locator("tbody tr");
    // Six outcome rows first (issue 15: how the turns ended), then the nine metrics.
    expect(await rows.count()).toBe(15);
    const metrics = await rows.evaluateAll((elements) =>
      elements.map((element) => element.getAttribute("data-metric")),
    );
    expect(metrics.slice(0, 6)).toEqual([
      "turns_completed",
      "turns_not_completed",
      "turns_all_tools_failed",
      "tool_errors",
      "fallbacks_ok",
      "fallbacks_failed",
    ]);
    expect(metrics).toEqual(
      expect.arrayContaining([
        "total_tokens",
        "calls",
        "tools",
        "wall_time_ms",
        "mean_ttft_ms",
        "cost_usd",
      ]),
    );
    // Each row: the metric, A, B, B − A and the relative change.
    const tokens = await table
      .locator('tbody tr[data-metric="total_tokens"]')
      .locator("th, td")
      .allTextContents();
    expect(tokens).toHaveLength(5);
    const a = Number((tokens[1] ?? "").replace(/[^0-9]/g, ""));
    const b = Number((tokens[2] ?? "").replace(/[^0-9]/g, ""));
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    expect(a).not.toBe(b);
    expect(tokens[3]).toMatch(/^[+−]\d/);
    expect(tokens[4]).toMatch(/^[+−]\d+(\.\d)?%/);
    // Both sessions ran the same two tools: that delta is zero.
    const tools = await table.locator('tbody tr[data-metric="tools"] td').allTextContents();
    expect(tools.slice(0, 2)).toEqual(["2", "2"]);
    expect(tools[2]).toMatch(/^±0/);
    // The simulated model costs nothing, on both sides, by the price table.
    const cost = await table.locator('tbody tr[data-metric="cost_usd"] td').allTextContents();
    expect(cost.slice(0, 3)).toEqual(["$0", "$0", "±$0"]);

    await screenshot(page, "04-compare");
    expectCleanPage({ page, ...opened });
  });

  it("renders hostile model output harmless", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      const hostile = [
        "Here is **bold** text and a list:\n\n",
        "- first item\n- second item\n\n",
        "```js\nconst answer = 42;\n```\n\n",
        "<script>window.__pwned=1</script>\n\n",
        'Inline <img src=x onerror="window.__pwned=2"> image.\n\n',
        "A [click](javascript:window.__pwned=3) link and ",
        "![remote](https://example.com/tracker.png) picture.\n\n",
        '<iframe src="https://example.com"></iframe>\n',
      ];
      const events = completionStream({ text: hostile });
      fake.enqueue(streamReply(events.flatMap((event) => [event, { waitMs: 15 }])));
      const sessionId = await e2e.lab.createSession("E2E: hostile output", {
        tool_invocation_mode: "dual_agent",
        chat_agent: { model: "openai:fake", base_url: fake.baseUrl, options: { max_retries: 0 } },
        event_agent: { model: "sim" },
      });

      const { page, ...opened } = await newPage();
      await openSession(page, e2e.lab, sessionId);
      await sendMessage(page, "say something dangerous");
      await waitForTurnStatus(page, "completed");
      expect(fake.requests).toHaveLength(1);

      const message = page.getByTestId("assistant-message");
      await expect.poll(() => message.count()).toBe(1);
      await message.waitFor({ state: "visible" });

      // Nothing ran, nothing was embedded, nothing was loaded.
      expect(await page.evaluate("typeof window.__pwned")).toBe("undefined");
      expect(await message.locator("script").count()).toBe(0);
      expect(await message.locator("iframe").count()).toBe(0);
      expect(await message.locator("img").count()).toBe(0);
      expect(await page.locator('img[src^="http"]').count()).toBe(0);
      expect(await page.locator("iframe").count()).toBe(0);
      const hrefs = await page
        .locator("a[href]")
        .evaluateAll((elements) => elements.map((element) => element.getAttribute("href") ?? ""));
      expect(hrefs.filter((href) => /^\s*javascript:/i.test(href))).toEqual([]);

      // The markdown is rendered; the HTML is shown as text.
      expect(await message.locator("strong").allTextContents()).toEqual(["bold"]);
      expect(await message.locator("li").allTextContents()).toEqual(["first item", "second item"]);
      expect(await message.locator("pre code").textContent()).toContain("const answer = 42;");
      const text = (await message.textContent()) ?? "";
      expect(text).toContain("<script>window.__pwned=1</script>");
      expect(text).toContain('<img src=x onerror="window.__pwned=2">');
      expect(text).toContain('<iframe src="https://example.com"></iframe>');
      expect(text).toContain("[image: remote]");
      await message.getByText("<script>window.__pwned=1</script>").waitFor({ state: "visible" });

      // The javascript: link is plain text; clicking it does nothing.
      const link = message.getByText("click", { exact: true });
      await link.waitFor({ state: "visible" });
      expect(await link.evaluate((element) => element.tagName)).not.toBe("A");
      const before = page.url();
      await link.click();
      await page.waitForTimeout(200);
      expect(await page.evaluate("typeof window.__pwned")).toBe("undefined");
      expect(page.url()).toBe(before);

      // No request for example.com (or the relative "x" image) was even attempted.
      expect(opened.requests.filter((url) => url.includes("example.com"))).toEqual([]);
      expect(opened.requests.filter((url) => new URL(url).pathname === "/x")).toEqual([]);

      await screenshot(page, "05-hostile-output");
      expectCleanPage({ page, ...opened });
    } finally {
      await fake.close();
    }
  });

  it("stays usable in a 400 px window: no horizontal overflow, the composer in view", async () => {
    const sessionId = await e2e.lab.createSession("E2E: a narrow window with a rather long title", {
      tool_invocation_mode: "dual_agent",
    });
    await e2e.lab.runTurn(sessionId, TWO_TOOLS_MESSAGE);

    const { page, ...opened } = await newPage({ width: 400, height: 800 });
    await page.goto(e2e.lab.url);
    await page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`).waitFor({
      state: "visible",
    });
    await page.getByTestId("new-session-form").waitFor({ state: "visible" });
    const sessionsOverflow = await horizontalOverflow(page);
    expect(sessionsOverflow.scrollWidth).toBeLessThanOrEqual(sessionsOverflow.clientWidth + 1);
    await screenshot(page, "06-narrow-sessions");

    await page
      .locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`)
      .getByTestId("session-link")
      .click();
    await page.getByTestId("message-input").waitFor({ state: "visible" });
    await page.getByTestId("tool-card").first().waitFor({ state: "visible" });
    const sessionOverflow = await horizontalOverflow(page);
    expect(sessionOverflow.scrollWidth).toBeLessThanOrEqual(sessionOverflow.clientWidth + 1);
    for (const testId of ["message-input", "send-button"]) {
      const element = page.getByTestId(testId);
      await element.scrollIntoViewIfNeeded();
      expect(await element.isVisible()).toBe(true);
      const box = await element.boundingBox();
      expect(box).not.toBeNull();
      expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(400);
    }
    // Still works there: a second turn from the narrow composer.
    await sendMessage(page, "search for narrow layouts");
    await waitForTurnStatus(page, "completed");
    const afterTurn = await horizontalOverflow(page);
    expect(afterTurn.scrollWidth).toBeLessThanOrEqual(afterTurn.clientWidth + 1);
    await screenshot(page, "06-narrow-session");
    expectCleanPage({ page, ...opened });
  });

  it("stops a slow turn with Stop: the page and the stored turn say cancelled", async () => {
    const sessionId = await e2e.lab.createSession("E2E: stop a slow turn", {
      tool_invocation_mode: "dual_agent",
      chat_agent: { model: "sim", options: { tokens_per_second: 15 } },
      event_agent: { model: "sim" },
    });
    const { page, ...opened } = await newPage();
    await openSession(page, e2e.lab, sessionId);
    await sendMessage(page, TWO_TOOLS_MESSAGE);

    // Let it stream a little, then stop it in the middle.
    await page.getByTestId("assistant-message").first().waitFor({ state: "visible" });
    expect(await page.locator('[data-testid="turn-status"][data-status="running"]').count()).toBe(
      1,
    );
    await page.getByTestId("stop-button").click();

    await waitForTurnStatus(page, "cancelled");
    expect(await page.getByTestId("turn-status").textContent()).toContain("cancelled");
    expect(await page.getByTestId("stop-button").count()).toBe(0);
    await expect
      .poll(async () => (await storedTurns(sessionId)).at(-1)?.status, { timeout: WAIT_MS })
      .toBe("cancelled");
    // What streamed before Stop is kept; the composer is ready for the next message.
    expect(
      ((await page.getByTestId("assistant-message").first().textContent()) ?? "").length,
    ).toBeGreaterThan(0);
    expect(await page.getByTestId("message-input").isEditable()).toBe(true);

    await screenshot(page, "07-stopped-turn");
    expectCleanPage({ page, ...opened });
  });
});
