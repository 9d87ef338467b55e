/**
 * The call inspector in chromium: every model call on the usage tab opens to show the exact
 * request body the lab sent and the raw stream it received (the dual agent's `<event>` tags
 * included), with sizes, the cut at the capture cap, and a plain answer when nothing was kept.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { UsageCallRecord } from "../../src/domain/usage.js";
import { sessionCalls } from "./api-pages.js";
import {
  expectCleanPage,
  openSession,
  requireChromium,
  screenshot,
  sendMessage,
  setUpLab,
  waitForTurnStatus,
} from "./harness.js";

requireChromium();

const e2e = setUpLab();

const SIM_DUAL = {
  tool_invocation_mode: "dual_agent",
  chat_agent: { model: "sim", options: { first_token_ms: 10, tokens_per_second: 2000 } },
  event_agent: { model: "sim", options: { first_token_ms: 5 } },
  tools: ["mock_search"],
};

/** Every call of the session as the API serves them, page after page. */
const usageCalls = (sessionId: string): Promise<UsageCallRecord[]> =>
  sessionCalls(e2e.lab, sessionId);

/** Opens the usage tab and the inspector of the first chat completion row. */
async function inspectFirstChatCall(page: Page): Promise<void> {
  await page.getByTestId("tab-usage").click();
  const row = page.locator('[data-testid="call-row"][data-call-kind="chat_completion"]').first();
  await row.waitFor({ state: "visible" });
  await row.getByTestId("inspect-call").click();
  await page.getByTestId("call-inspector").waitFor({ state: "visible" });
}

describe("the call inspector", () => {
  it("opens a dual agent call: the request JSON and the raw stream with its <event> tags", async () => {
    const sessionId = await e2e.lab.createSession("E2E: call inspector", SIM_DUAL);
    const { page, ...opened } = await e2e.newPage({ width: 1280, height: 900 });
    await openSession(page, e2e.lab, sessionId);
    await sendMessage(page, "search for agent lab");
    await waitForTurnStatus(page, "completed");

    await inspectFirstChatCall(page);
    const dialog = page.getByTestId("call-inspector");
    const requestBody = dialog.getByTestId("call-request-body");
    await requestBody.waitFor({ state: "attached" });
    // The request: pretty JSON whose messages end with what the user typed; its digest names it.
    const requestText = (await requestBody.textContent()) ?? "";
    const request = JSON.parse(requestText) as { messages: { role: string; content: unknown }[] };
    expect(requestText).toContain('\n  "messages": [');
    expect(request.messages.at(-1)).toMatchObject({
      role: "user",
      content: "search for agent lab",
    });
    expect(await dialog.locator(".payload-message").last().textContent()).toContain(
      "search for agent lab",
    );
    // The raw stream, as received: the dual agent's tag is there, in a scrollable monospace block.
    const responseBody = dialog.getByTestId("call-response-body");
    const raw = (await responseBody.textContent()) ?? "";
    // The raw chunks split the dual agent's tag; the joined deltas show it whole.
    expect(raw).toContain("data:");
    expect(raw).toContain('"content":');
    const streamed = (await dialog.getByTestId("call-decoded-text").textContent()) ?? "";
    expect(streamed).toMatch(/<event name="mock_search">\{.*\}<\/event>/);
    expect(
      await page.evaluate<string>(
        `getComputedStyle(document.querySelector('[data-testid="call-response-body"]')).overflow`,
      ),
    ).toBe("auto");
    expect(await dialog.getByTestId("call-request-size").textContent()).toMatch(
      /^\d+(\.\d)? (B|KiB)$/,
    );
    expect(await dialog.getByTestId("call-storage").textContent()).toMatch(/stored compressed/);
    // What the page shows is what the API serves for that call.
    const calls = await usageCalls(sessionId);
    const chat = calls.find((call) => call.call_kind === "chat_completion");
    const payload = await e2e.lab.api<{ request_body: string; response_body: string }>(
      `/api/sessions/${encodeURIComponent(sessionId)}/calls/${encodeURIComponent(chat?.metric_key ?? "")}`,
    );
    expect(raw).toBe(payload.response_body);
    expect(JSON.parse(requestText)).toEqual(JSON.parse(payload.request_body));
    // Nothing long breaks the layout: the dialog stays inside the window.
    const box = await dialog.boundingBox();
    expect(box?.width ?? 0).toBeLessThanOrEqual(1280);
    await screenshot(page, "11-call-inspector");

    // Esc closes it, and focus goes back to the button that opened it.
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect(
      await page.evaluate(
        "document.activeElement && document.activeElement.getAttribute('data-testid')",
      ),
    ).toBe("inspect-call");
    // The keyboard opens it again (Enter on the focused button), and Close closes it.
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "visible" });
    await dialog.getByTestId("call-inspector-close").click();
    await dialog.waitFor({ state: "detached" });
    expectCleanPage({ page, ...opened });
  });

  it("shows the sim's cost as $0, estimated, on every model call, the turn and the session", async () => {
    const sessionId = await e2e.lab.createSession("E2E: sim cost", SIM_DUAL);
    await e2e.lab.runTurn(sessionId, "search for sqlite wal mode");
    const { page, ...opened } = await e2e.newPage();
    await openSession(page, e2e.lab, sessionId);
    const sessionCost = page.getByTestId("session-cost");
    expect(await sessionCost.textContent()).toBe("$0 estimated");
    expect(await sessionCost.getAttribute("data-source")).toBe("estimated");
    expect(await sessionCost.getAttribute("title")).toMatch(/estimated with the price table/);
    expect(await page.getByTestId("turn-usage").first().textContent()).toMatch(
      /tokens · \$0 estimated$/,
    );

    await page.getByTestId("tab-usage").click();
    const rows = page.getByTestId("call-row");
    await rows.first().waitFor({ state: "visible" });
    const calls = await usageCalls(sessionId);
    expect(await rows.count()).toBe(calls.length);
    const models = page.locator('[data-testid="call-row"]:not([data-call-kind="tool_execution"])');
    expect(await models.count()).toBeGreaterThan(0);
    for (const cost of await models.getByTestId("call-cost").all()) {
      expect(await cost.textContent()).toBe("$0 estimated");
    }
    // Tool executions cost nothing and cannot be opened (no model call to show).
    const tools = page.locator('[data-testid="call-row"][data-call-kind="tool_execution"]');
    expect(await tools.count()).toBeGreaterThan(0);
    expect(await tools.getByTestId("inspect-call").count()).toBe(0);
    const turnRow = page.getByTestId("usage-table").locator("tbody tr").first();
    expect(await turnRow.getByTestId("cost").textContent()).toBe("$0 estimated");
    await screenshot(page, "11-usage-calls-cost");
    expectCleanPage({ page, ...opened });
  });

  it("says when a body was cut at the capture cap", async () => {
    const sessionId = await e2e.lab.createSession("E2E: capture cap", {
      ...SIM_DUAL,
      chat_agent: { ...SIM_DUAL.chat_agent, system_prompt: `Be thorough. ${"x".repeat(3000)}` },
      capture: { payloads: "on", max_bytes: 1024 },
    });
    await e2e.lab.runTurn(sessionId, "search for agent lab");
    const { page, ...opened } = await e2e.newPage();
    await openSession(page, e2e.lab, sessionId);
    await inspectFirstChatCall(page);
    const dialog = page.getByTestId("call-inspector");
    const size = dialog.getByTestId("call-request-size");
    await size.waitFor({ state: "visible" });
    expect(await size.textContent()).toMatch(/cut at the capture cap: the first 1\.0 KiB are kept/);
    expect(await size.getAttribute("class")).toContain("size-note-cut");
    // The cut body is shown as the text it is, not as JSON that no longer parses.
    const body = (await dialog.getByTestId("call-request-body").textContent()) ?? "";
    expect(body.length).toBeLessThanOrEqual(1024);
    expect(body.startsWith("{")).toBe(true);
    await screenshot(page, "11-call-inspector-cut");
    expectCleanPage({ page, ...opened });
  });

  it("explains, when capture was off, that nothing was kept and how to keep it", async () => {
    const sessionId = await e2e.lab.createSession("E2E: capture off", {
      ...SIM_DUAL,
      capture: { payloads: "off" },
    });
    await e2e.lab.runTurn(sessionId, "search for agent lab");
    const { page, ...opened } = await e2e.newPage();
    await openSession(page, e2e.lab, sessionId);
    await inspectFirstChatCall(page);
    const notice = page.getByTestId("call-not-captured");
    await notice.waitFor({ state: "visible" });
    expect(await notice.textContent()).toMatch(/Nothing was captured for this call\./);
    expect(await notice.textContent()).toMatch(/"capture": \{ "payloads": "on" \}/);
    await screenshot(page, "11-call-not-captured");
    await page.keyboard.press("Escape");
    await page.getByTestId("call-inspector").waitFor({ state: "detached" });
    // A 404 the page expected is no page error; the browser logs the failed fetch itself.
    expect(opened.blocked).toEqual([]);
    expect(opened.errors.filter((error) => !/404/.test(error))).toEqual([]);
  });
});
