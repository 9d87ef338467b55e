/**
 * The chat follows the turn (issue 15, part 3), in chromium against the lab's server: a new turn
 * streams in view above the composer from the second turn on, scrolling up stops the following
 * and offers "Jump to live", the header counts the running turn and its tokens, a turn whose every
 * tool call failed is not a green "completed", a failed turn shows its error and a Retry that runs
 * it again, and a chat_agent_tools session shows no event model.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../fake-openai-server.js";
import {
  expectCleanPage,
  openSession,
  requireChromium,
  SCREENSHOT_DIR,
  screenshot,
  sendMessage,
  setUpLab,
  waitForTurnStatus,
} from "./harness.js";

requireChromium();

const e2e = setUpLab();

const fromBottom = (page: Page) =>
  page.evaluate<number>(
    "document.documentElement.scrollHeight - (window.scrollY + window.innerHeight)",
  );

/** Where the live turn's last line ends and where the composer begins, in window pixels. */
async function liveEndAndComposerTop(
  page: Page,
): Promise<{ liveEnd: number; composerTop: number }> {
  const live = await page.locator(".turn-live").boundingBox();
  const composer = await page.locator(".composer-area").boundingBox();
  if (!live || !composer) throw new Error("the live turn or the composer is not on the page");
  return { liveEnd: live.y + live.height, composerTop: composer.y };
}

/** The window as the reader sees it (the harness's shot grows the window, which would scroll). */
async function windowShot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), caret: "hide" });
}

describe("the chat follows the turn", () => {
  it("keeps a streaming second turn in view, stops following on scroll up, jumps back", async () => {
    const sessionId = await e2e.lab.createSession("E2E: follow the live turn", {
      tool_invocation_mode: "chat_agent_tools",
      // Slow enough to watch on a busy machine: a tool turn's answer streams for ~15 s.
      chat_agent: { model: "sim", options: { first_token_ms: 200, tokens_per_second: 8 } },
      tools: ["mock_search"],
    });
    // Short answers fill the page above the new turn.
    await e2e.lab.runTurn(sessionId, "hello");
    await e2e.lab.runTurn(sessionId, "thanks");
    const before = await e2e.lab.api<{ session: { total_tokens: number } }>(
      `/api/sessions/${sessionId}/usage`,
    );
    const opened = await e2e.newPage({ width: 1280, height: 640 });
    const { page } = opened;
    await openSession(page, e2e.lab, sessionId);
    expect(await page.getByTestId("session-turns").textContent()).toBe("2");

    await sendMessage(page, "search for streaming chat interfaces");
    // The header counts the turn while it runs, before it is stored.
    await page.locator('[data-testid="session-turns"][data-live="true"]').waitFor();
    expect(await page.getByTestId("session-turns").textContent()).toBe("3");
    // Round 1's usage arrives while round 2 streams: the token count grows live.
    await page.locator(".turn-live .tool-card").first().waitFor();
    await page.locator('.turn-live [data-testid="assistant-message"]').first().waitFor();
    await expect
      .poll(async () =>
        Number((await page.getByTestId("session-tokens").textContent())?.replace(/\D/g, "")),
      )
      .toBeGreaterThan(before.session.total_tokens);

    // Following: the page is at its bottom and the live text ends above the composer.
    await expect.poll(() => fromBottom(page)).toBeLessThan(4);
    const { liveEnd, composerTop } = await liveEndAndComposerTop(page);
    expect(liveEnd).toBeLessThanOrEqual(composerTop + 1);
    expect(await page.getByTestId("jump-to-live").count()).toBe(0);
    await windowShot(page, "daily-01-following-live-turn");

    // Scrolling up to read stops the following and offers the way back.
    await page.mouse.move(640, 200);
    await page.mouse.wheel(0, -1500);
    await page.getByTestId("jump-to-live").waitFor({ state: "visible" });
    const away = await fromBottom(page);
    expect(away).toBeGreaterThan(100);
    await page.waitForTimeout(600); // the stream goes on; the reader is left where they are
    expect(await fromBottom(page)).toBeGreaterThanOrEqual(away);
    await windowShot(page, "daily-02-jump-to-live");
    await page.getByTestId("jump-to-live").click();
    await expect.poll(() => fromBottom(page)).toBeLessThan(4);
    expect(await page.getByTestId("jump-to-live").count()).toBe(0);

    await waitForTurnStatus(page, "completed");
    expect(await page.getByTestId("session-turns").getAttribute("data-live")).toBeNull();
    expect(await page.getByTestId("session-turns").textContent()).toBe("3");
    expectCleanPage(opened);
  }, 60_000);

  it("shows a completed turn whose every tool call failed as such, not as a green success", async () => {
    const sessionId = await e2e.lab.createSession("E2E: every tool call failed", {
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
      tools: ["mock_search"],
    });
    const opened = await e2e.newPage();
    const { page } = opened;
    await openSession(page, e2e.lab, sessionId);
    // chat_agent_tools runs no event agent: the header does not name one.
    expect(await page.getByTestId("session-event-model").count()).toBe(0);
    expect(await page.locator(".session-facts").textContent()).not.toContain("Event model");
    await sendMessage(page, "search for sqlite wal mode");
    await waitForTurnStatus(page, "completed");
    const badge = page.getByTestId("turn-outcome").last();
    expect(await badge.getAttribute("data-tone")).toBe("warn");
    expect(await badge.textContent()).toMatch(
      /^completed · (its tool call|all \d+ tool calls) failed$/,
    );
    expect(await badge.getAttribute("class")).not.toContain("badge-ok");
    const status = page.getByTestId("turn-status");
    expect(await status.getAttribute("data-tone")).toBe("warn");
    expect(await status.textContent()).toContain("failed");
    expect(
      await page.locator('[data-testid="tool-card"][data-state="error"]').count(),
    ).toBeGreaterThan(0);
    await screenshot(page, "daily-03-all-tools-failed");
    expectCleanPage(opened);
  });

  it("shows a dual_agent session's event model", async () => {
    const sessionId = await e2e.lab.createSession("E2E: dual agent header", {
      tool_invocation_mode: "dual_agent",
      chat_agent: { model: "sim" },
      event_agent: { model: "sim:helper" },
      tools: ["mock_search"],
    });
    const opened = await e2e.newPage();
    await openSession(opened.page, e2e.lab, sessionId);
    expect(await opened.page.getByTestId("session-event-model").textContent()).toBe("sim:helper");
    expectCleanPage(opened);
  });

  it("shows a failed turn's error with Retry, which runs its message again as a new turn", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      fake.enqueue(errorReply(500, "the upstream fell over", { "x-should-retry": "false" }));
      const sessionId = await e2e.lab.createSession("E2E: retry a failed turn", {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "openai:fake", base_url: fake.baseUrl, options: { max_retries: 0 } },
        tools: [],
      });
      const opened = await e2e.newPage();
      const { page } = opened;
      await openSession(page, e2e.lab, sessionId);
      await sendMessage(page, "hello there");
      await waitForTurnStatus(page, "failed");
      const failure = page.getByTestId("turn-error").last();
      expect(await failure.textContent()).toContain("the upstream fell over");
      const retry = failure.getByTestId("retry-turn");
      expect(await retry.isEnabled()).toBe(true);
      expect(await page.getByTestId("turn-outcome").last().getAttribute("data-tone")).toBe("error");
      await screenshot(page, "daily-04-failed-turn-retry");

      fake.enqueue(streamReply(completionStream({ text: ["Hello ", "again."] })));
      await retry.click();
      await waitForTurnStatus(page, "completed");
      const questions = await page.getByTestId("user-message").allTextContents();
      expect(questions).toEqual(["Youhello there", "Youhello there"]);
      expect(await page.getByTestId("assistant-message").last().textContent()).toBe(
        "AssistantHello again.",
      );
      // The failed turn is kept, with its error, and its Retry stays offered.
      const turns = await e2e.lab.api<{ turns: { turn_index: number; status: string }[] }>(
        `/api/sessions/${sessionId}`,
      );
      expect(turns.turns.map((turn) => turn.status)).toEqual(["failed", "completed"]);
      expect(await page.getByTestId("turn-error").count()).toBe(1);
      // The retry asked the endpoint with the same message.
      const body = fake.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
      expect(body.messages.filter((m) => m.role === "user").at(-1)?.content).toBe("hello there");
      await screenshot(page, "daily-05-retried");
      expectCleanPage(opened);
    } finally {
      await fake.close();
    }
  });
});
