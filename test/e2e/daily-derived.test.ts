/**
 * Fork, replay and retry from the web UI (issue 15, part 1), in chromium against the lab's server:
 * "Fork here" on a turn makes a new session with the history up to it (and the mode changed), and
 * "Replay…" runs the session's messages under another setup, shows its progress, then opens the
 * two in Compare with both transcripts side by side.
 */
import { describe, expect, it } from "vitest";
import {
  expectCleanPage,
  openSession,
  requireChromium,
  screenshot,
  setUpLab,
  WAIT_MS,
} from "./harness.js";

requireChromium();

const e2e = setUpLab();

const MESSAGES = ["search for sqlite wal mode", "search for agent lab", "thanks"];

async function source(): Promise<string> {
  const id = await e2e.lab.createSession("E2E: source of forks", {
    tool_invocation_mode: "dual_agent",
    // A little slow, so a replay's progress is on screen long enough to see.
    chat_agent: { model: "sim", options: { first_token_ms: 300 } },
    event_agent: { model: "sim" },
    tools: ["mock_search"],
  });
  for (const message of MESSAGES) await e2e.lab.runTurn(id, message);
  return id;
}

const idOf = (url: string) => decodeURIComponent(new URL(url).pathname.split("/").at(-1) ?? "");

describe("fork and replay from the session page", () => {
  it("forks at a turn into a new session with the history up to it and a changed mode", async () => {
    const sourceId = await source();
    const opened = await e2e.newPage();
    const { page } = opened;
    await openSession(page, e2e.lab, sourceId);
    expect(await page.getByTestId("fork-button").count()).toBe(MESSAGES.length);
    await page.getByTestId("fork-button").nth(1).click();
    const panel = page.getByTestId("fork-panel");
    await panel.waitFor();
    await page.getByTestId("fork-title").fill("E2E: forked after turn 2");
    await page.getByTestId("fork-mode").selectOption("chat_agent_tools");
    await screenshot(page, "daily-07-fork-panel");
    await page.getByTestId("fork-submit").click();
    await page.waitForURL(
      (url) => idOf(url.href) !== sourceId && url.pathname.startsWith("/sessions/"),
      {
        timeout: WAIT_MS,
      },
    );
    await page.getByTestId("message-input").waitFor();
    const forkId = idOf(page.url());
    expect(await page.locator("h1").textContent()).toBe("E2E: forked after turn 2");
    expect(await page.getByTestId("derived-from").textContent()).toContain(
      `Forked from ${sourceId} after turn 2`,
    );
    // The history up to turn 2, and the mode changed (so no event model shown).
    expect(await page.getByTestId("user-message").allTextContents()).toEqual(
      MESSAGES.slice(0, 2).map((message) => `You${message}`),
    );
    expect(await page.getByTestId("session-event-model").count()).toBe(0);
    const stored = await e2e.lab.api<{
      session: { tool_invocation_mode: string; config: Record<string, unknown> };
    }>(`/api/sessions/${forkId}`);
    expect(stored.session.tool_invocation_mode).toBe("chat_agent_tools");
    expect(stored.session.config.derived_from).toEqual({
      kind: "fork",
      session_id: sourceId,
      turn_index: 2,
    });
    await screenshot(page, "daily-08-forked-session");
    expectCleanPage(opened);
  });

  it("replays the session under another model, shows progress, then opens both in Compare", async () => {
    const sourceId = await source();
    const opened = await e2e.newPage();
    const { page } = opened;
    await openSession(page, e2e.lab, sourceId);
    await page.getByTestId("replay-button").click();
    await page.getByTestId("replay-panel").waitFor();
    await page.getByTestId("replay-model").fill("sim:replayed");
    await page.getByTestId("replay-mode").selectOption("chat_agent_tools");
    await page.getByTestId("replay-submit").click();
    await page.getByTestId("replay-progress").waitFor();
    await page.waitForURL(/\/compare\?/, { timeout: 30_000 });
    const params = new URL(page.url()).searchParams;
    expect(params.get("a")).toBe(sourceId);
    const replayId = params.get("b") ?? "";
    expect(replayId).not.toBe("");
    await page.getByTestId("compare-transcripts").waitFor();
    const rows = page.getByTestId("compare-transcript-row");
    await expect.poll(() => rows.count()).toBe(MESSAGES.length);
    for (let index = 0; index < MESSAGES.length; index++) {
      const row = rows.nth(index);
      expect(await row.locator('[data-side="a"] [data-testid="user-message"]').textContent()).toBe(
        `You${MESSAGES[index]}`,
      );
      expect(await row.locator('[data-side="b"] [data-testid="user-message"]').textContent()).toBe(
        `You${MESSAGES[index]}`,
      );
    }
    const stored = await e2e.lab.api<{
      session: { config: Record<string, unknown> };
      turns: { status: string }[];
    }>(`/api/sessions/${replayId}`);
    expect((stored.session.config.chat_agent as { model: string }).model).toBe("sim:replayed");
    expect(stored.turns.map((turn) => turn.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
    expect(await page.getByTestId("compare-side-b").textContent()).toContain("sim:replayed");
    await screenshot(page, "daily-09-replay-compare");
    expectCleanPage(opened);
  }, 60_000);
});
