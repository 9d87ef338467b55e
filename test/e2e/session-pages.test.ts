/**
 * A session longer than a page of every list, in chromium against the lab's server: the chat shows
 * the whole transcript (the page follows `next_cursor` for messages, calls and audit), the usage
 * tab's calls table reads the calls a page at a time with "Load more", and the audit tab counts
 * every entry. Screenshot: test-artifacts/screenshots/13-session-calls-paged.png.
 */

import { beforeAll, describe, expect, it } from "vitest";
import type { UsageCallRecord } from "../../src/domain/usage.js";
import { readAllPages, sessionCalls } from "./api-pages.js";
import { expectCleanPage, openSession, requireChromium, screenshot, setUpLab } from "./harness.js";

requireChromium();

const e2e = setUpLab();
const { newPage } = e2e;

/** Four messages a turn (question, tool call, tool reply, answer): 520 is past a 500-row page. */
const TURNS = 130;
const CALLS_PAGE = 100;
let sessionId = "";
let calls: UsageCallRecord[] = [];

beforeAll(async () => {
  sessionId = await e2e.lab.createSession("E2E: a long session", {
    tool_invocation_mode: "chat_agent_tools",
    chat_agent: { model: "sim", options: { first_token_ms: 0, tokens_per_second: 1_000_000 } },
    tools: ["mock_search"],
  });
  for (let turn = 0; turn < TURNS; turn++) {
    await e2e.lab.runTurn(sessionId, `search for agent lab ${turn}`);
  }
  calls = await sessionCalls(e2e.lab, sessionId);
}, 120_000);

const base = () => `/api/sessions/${encodeURIComponent(sessionId)}`;

describe("a session longer than a page, in chromium", () => {
  it("shows the whole transcript, reading the messages page after page", async () => {
    const messages = await readAllPages<{ role: string }>(
      e2e.lab,
      `${base()}/messages`,
      "messages",
    );
    expect(messages.length).toBeGreaterThan(500);
    const opened = await newPage();
    const { page } = opened;
    await openSession(page, e2e.lab, sessionId);
    const questions = page.getByTestId("user-message");
    expect(await questions.count()).toBe(TURNS);
    expect(await questions.first().textContent()).toContain("search for agent lab 0");
    expect(await questions.last().textContent()).toContain(`search for agent lab ${TURNS - 1}`);
    // It took more than one page: a later request carried the first page's cursor.
    const pages = opened.requests
      .filter((url) => url.includes(`${sessionId}/messages?`))
      .map((url) => new URL(url).searchParams);
    expect(pages.some((params) => params.has("cursor"))).toBe(true);
    // Nothing was cut: the page does not say it shows only the beginning.
    expect(await page.getByTestId("record-partial").count()).toBe(0);
    expectCleanPage(opened);
  });

  it("pages the calls table of the usage tab with Load more", async () => {
    expect(calls.length).toBeGreaterThan(2 * CALLS_PAGE);
    const opened = await newPage();
    const { page } = opened;
    await openSession(page, e2e.lab, sessionId);
    await page.getByTestId("tab-usage").click();
    const rows = page.getByTestId("call-row");
    await rows.first().waitFor({ state: "visible" });
    expect(await rows.count()).toBe(CALLS_PAGE);
    expect(await page.getByTestId("calls-shown").textContent()).toBe(
      `${CALLS_PAGE} of ${calls.length} calls shown`,
    );
    await page.getByTestId("load-more-calls").click();
    await page
      .getByTestId("calls-shown")
      .filter({ hasText: `${2 * CALLS_PAGE} of` })
      .waitFor({ state: "visible" });
    expect(await rows.count()).toBe(2 * CALLS_PAGE);
    const keys = await rows.evaluateAll((elements) =>
      elements.map((element) => element.getAttribute("data-metric-key") ?? ""),
    );
    // The rows are the API's first two pages of calls, each once.
    expect(new Set(keys)).toEqual(
      new Set(calls.slice(0, 2 * CALLS_PAGE).map((call) => call.metric_key ?? "")),
    );
    await screenshot(page, "13-session-calls-paged");
    expectCleanPage(opened);
  });

  it("counts every audit entry on the audit tab", async () => {
    const audit = await readAllPages<{ id: number }>(e2e.lab, `${base()}/audit`, "audit");
    expect(audit.length).toBeGreaterThan(500);
    const opened = await newPage();
    const { page } = opened;
    await openSession(page, e2e.lab, sessionId);
    expect(await page.getByTestId("tab-audit").locator(".tab-count").textContent()).toBe(
      String(audit.length),
    );
    await page.getByTestId("tab-audit").click();
    expect(await page.getByTestId("audit-entry").count()).toBe(audit.length);
    expectCleanPage(opened);
  });
});
