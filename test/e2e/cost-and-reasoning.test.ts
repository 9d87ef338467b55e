/**
 * What a real provider reports, as the session page shows it in chromium: the provider's cost
 * (labelled "reported"), the model that answered, reasoning kept apart from the answer and
 * collapsed, a refusal shown as one, the sim's thinking streamed live, and a cancelled call's
 * usage shown as the estimate it is, equal to what the API serves.
 */
import { describe, expect, it } from "vitest";
import { runCli, runCliJson } from "../../src/cli/test-fixtures.js";
import type { UsageCallRecord } from "../../src/domain/usage.js";
import { FakeOpenAIServer, SSE_DONE, sseEvent, streamReply } from "../fake-openai-server.js";
import { sessionCalls } from "./api-pages.js";
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

requireChromium();

const e2e = setUpLab();

const SERVED = "fake-router/served-1";

/** A chunk as a router sends it: the model that answered, not the one asked for. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return sseEvent({
    id: "gen-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: SERVED,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
}

function usageEvent(usage: Record<string, unknown>): string {
  return sseEvent({
    id: "gen-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: SERVED,
    choices: [],
    usage,
  });
}

const REASONING = "The user says hello; a greeting back is enough.";

function fakeSession(title: string, baseUrl: string): Promise<string> {
  return e2e.lab.createSession(title, {
    tool_invocation_mode: "chat_agent_tools",
    chat_agent: { model: "openai:fake", base_url: baseUrl, options: { max_retries: 0 } },
    tools: [],
  });
}

/** Every call of the session as the API serves them, page after page. */
const apiCalls = (sessionId: string): Promise<UsageCallRecord[]> =>
  sessionCalls(e2e.lab, sessionId);

describe("cost, served model, reasoning and refusals on the session page", () => {
  it("shows a provider's reported cost and served model, and its reasoning collapsed", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      fake.enqueue(
        streamReply([
          chunk({ role: "assistant", content: "" }),
          chunk({ reasoning_content: REASONING.slice(0, 20) }),
          chunk({ reasoning_content: REASONING.slice(20) }),
          chunk({ content: "Hello " }),
          chunk({ content: "there." }),
          chunk({}, "stop"),
          usageEvent({
            prompt_tokens: 20,
            completion_tokens: 30,
            total_tokens: 50,
            prompt_tokens_details: { cached_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: 18 },
            cost: 0.00123,
          }),
          SSE_DONE,
        ]),
      );
      const sessionId = await fakeSession("E2E: reported cost", fake.baseUrl);
      const { page, ...opened } = await e2e.newPage();
      await openSession(page, e2e.lab, sessionId);
      await sendMessage(page, "hello");
      await waitForTurnStatus(page, "completed");

      // The answer is only the answer; the thinking sits apart, closed, with its length.
      const answer = page.getByTestId("assistant-message").last();
      expect(await answer.textContent()).toBe("AssistantHello there.");
      const reasoning = page.getByTestId("reasoning").last();
      expect(await reasoning.getAttribute("open")).toBeNull();
      expect(await reasoning.locator("summary").textContent()).toBe(
        `Thinking · ${REASONING.length} chars`,
      );
      expect(await reasoning.locator(".reasoning-text").isVisible()).toBe(false);
      await reasoning.locator("summary").click();
      expect(await reasoning.locator(".reasoning-text").textContent()).toBe(REASONING);

      // The provider's figure, said to be the provider's, on the session and the turn.
      const sessionCost = page.getByTestId("session-cost");
      expect(await sessionCost.textContent()).toBe("$0.0012 reported");
      expect(await sessionCost.getAttribute("title")).toBe("1 call reported by the provider.");
      expect(await page.getByTestId("turn-cost").last().getAttribute("data-source")).toBe(
        "reported",
      );
      await screenshot(page, "11-reasoning-reported-cost");

      await page.getByTestId("tab-usage").click();
      const row = page.getByTestId("call-row").first();
      await row.waitFor({ state: "visible" });
      const cells = await row.locator("td").allTextContents();
      // Turn, call, model, then prompt, cached, completion, total, reasoning, cache write, cost.
      expect(cells.slice(3, 10)).toEqual(["20", "0", "30", "50", "18", "0", "$0.0012 reported"]);
      expect(await row.getByTestId("served-model").textContent()).toBe(`served: ${SERVED}`);
      const [call] = await apiCalls(sessionId);
      expect(call).toMatchObject({
        cost_usd: 0.00123,
        response_model: SERVED,
        usage_source: "endpoint",
      });
      // A loopback endpoint's calls are captured by default: the raw stream shows the thinking.
      await row.getByTestId("inspect-call").click();
      const raw = page.getByTestId("call-response-body");
      await raw.waitFor({ state: "visible" });
      expect(await raw.textContent()).toContain('"reasoning_content"');
      expect(await page.getByTestId("call-request-body").textContent()).not.toContain("api_key");
      await screenshot(page, "11-call-inspector-openai");
      await page.keyboard.press("Escape");
      await screenshot(page, "11-usage-reported-cost");
      expectCleanPage({ page, ...opened });
    } finally {
      await fake.close();
    }
  });

  it("shows a refusal as a refusal, not as the answer", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      fake.enqueue(
        streamReply([
          chunk({ role: "assistant", content: "" }),
          chunk({ refusal: "I can't help " }),
          chunk({ refusal: "with that." }),
          chunk({}, "stop"),
          usageEvent({ prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 }),
          SSE_DONE,
        ]),
      );
      const sessionId = await fakeSession("E2E: refusal", fake.baseUrl);
      const { page, ...opened } = await e2e.newPage();
      await openSession(page, e2e.lab, sessionId);
      await sendMessage(page, "do something bad");
      await waitForTurnStatus(page, "completed");
      const refusal = page.getByTestId("refusal-message");
      expect(await refusal.textContent()).toBe("RefusedI can't help with that.");
      expect(await page.getByTestId("assistant-message").count()).toBe(0);
      await page.getByTestId("tab-usage").click();
      await page.getByTestId("call-row").first().waitFor({ state: "visible" });
      expect(await page.getByTestId("call-row").first().textContent()).toContain("refused");
      await page.getByTestId("tab-chat").click();
      await screenshot(page, "11-refusal");
      expectCleanPage({ page, ...opened });
    } finally {
      await fake.close();
    }
  });

  it("streams the sim's thinking live into a collapsed block, then keeps it with the answer", async () => {
    const sessionId = await e2e.lab.createSession("E2E: live thinking", {
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: {
        model: "sim",
        options: { reasoning: true, first_token_ms: 50, tokens_per_second: 25 },
      },
      tools: [],
    });
    const { page, ...opened } = await e2e.newPage();
    await openSession(page, e2e.lab, sessionId);
    await sendMessage(page, "hello there");
    const live = page.locator('.turn-live [data-testid="reasoning"]');
    await live.waitFor({ state: "visible", timeout: WAIT_MS });
    expect(await live.locator("summary").textContent()).toMatch(/^Thinking… · \d+ chars?$/);
    expect(await live.getAttribute("open")).toBeNull();
    await screenshot(page, "11-live-thinking");
    await waitForTurnStatus(page, "completed");

    const stored = page.getByTestId("reasoning").last();
    const summary = (await stored.locator("summary").textContent()) ?? "";
    expect(summary).toMatch(/^Thinking · \d+ chars$/);
    await stored.locator("summary").click();
    const thinking = (await stored.locator(".reasoning-text").textContent()) ?? "";
    expect(thinking.length).toBe(Number(summary.replace(/\D/g, "")));
    const answer = (await page.getByTestId("assistant-message").last().textContent()) ?? "";
    expect(answer).not.toContain(thinking);
    await page.getByTestId("tab-usage").click();
    const row = page.getByTestId("call-row").first();
    await row.waitFor({ state: "visible" });
    expect(Number((await row.locator("td").nth(7).textContent()) ?? "0")).toBeGreaterThan(0);
    expectCleanPage({ page, ...opened });
  });

  it("labels a cancelled call's usage as estimated, with the numbers the API serves", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      fake.enqueue(
        streamReply(
          [
            chunk({ role: "assistant", content: "" }),
            chunk({ content: "A long answer that is " }),
            chunk({ content: "cut short by the user." }),
          ],
          { ending: "stall" },
        ),
      );
      const sessionId = await fakeSession("E2E: cancelled call", fake.baseUrl);
      const { page, ...opened } = await e2e.newPage();
      await openSession(page, e2e.lab, sessionId);
      await sendMessage(page, "tell me everything");
      await page
        .locator('.turn-live [data-testid="assistant-message"]')
        .filter({ hasText: "cut short" })
        .waitFor({ state: "visible" });
      await page.getByTestId("stop-button").click();
      await waitForTurnStatus(page, "cancelled");

      const [call] = await apiCalls(sessionId);
      expect(call).toMatchObject({ estimated: true, usage_source: "estimated" });
      expect(call?.completion_tokens).toBeGreaterThan(0);
      expect(await page.getByTestId("session-tokens-estimated").textContent()).toBe(" estimated");
      expect(await page.getByTestId("session-tokens").textContent()).toBe(
        `${call?.total_tokens.toLocaleString("en-US")} estimated`,
      );

      await page.getByTestId("tab-usage").click();
      const row = page.getByTestId("call-row").first();
      await row.waitFor({ state: "visible" });
      expect(await row.getAttribute("data-usage-source")).toBe("estimated");
      const cells = await row.locator("td").allTextContents();
      expect(cells[3]).toBe(String(call?.prompt_tokens));
      expect(cells[5]).toBe(String(call?.completion_tokens));
      expect(cells[6]).toBe(`${call?.total_tokens} estimated`);
      expect(await row.getByTestId("call-usage-source").getAttribute("title")).toMatch(/cut short/);
      const turnRow = page.getByTestId("usage-table").locator("tbody tr").first();
      expect(await turnRow.getByTestId("usage-estimated").count()).toBe(1);
      await screenshot(page, "11-cancelled-estimated");
      expectCleanPage({ page, ...opened });

      // The CLI reads the same file and says the same: the numbers, and that they are estimates.
      const cli = await runCliJson<{ calls: UsageCallRecord[] }>([
        "--db",
        e2e.lab.store.path,
        "usage",
        sessionId,
      ]);
      expect(cli.calls).toEqual(await apiCalls(sessionId));
      const table = await runCli(["--db", e2e.lab.store.path, "usage", sessionId]);
      expect(table.status).toBe(0);
      expect(table.stdout).toMatch(/estimated/);
    } finally {
      await fake.close();
    }
  });
});
