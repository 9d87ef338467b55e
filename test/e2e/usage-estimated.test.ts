/**
 * The usage tab's "estimated" label in chromium: a turn whose endpoint reported no usage is
 * counted by the lab's tokenizer, and its figures say so; a turn with reported usage carries none.
 */
import { describe, expect, it } from "vitest";
import { completionStream, FakeOpenAIServer, streamReply } from "../fake-openai-server.js";
import { expectCleanPage, openSession, requireChromium, screenshot, setUpLab } from "./harness.js";

requireChromium();

const e2e = setUpLab();

describe("estimated token counts on the usage tab", () => {
  it("labels the turn and session totals that include a call without reported usage, and only those", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      fake.enqueue(streamReply(completionStream({ text: ["Reported."] })));
      fake.enqueue(streamReply(completionStream({ text: ["Not reported."], usage: null })));
      const sessionId = await e2e.lab.createSession("E2E: estimated usage", {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "openai:fake", base_url: fake.baseUrl, options: { max_retries: 0 } },
        tools: [],
      });
      await e2e.lab.runTurn(sessionId, "first");
      await e2e.lab.runTurn(sessionId, "second");
      expect(fake.requests).toHaveLength(2);

      const { page, ...opened } = await e2e.newPage();
      await openSession(page, e2e.lab, sessionId);
      await page.getByTestId("tab-usage").click();
      const table = page.getByTestId("usage-table");
      await table.waitFor({ state: "visible" });
      const rows = table.locator("tbody tr");
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(0).getByTestId("usage-estimated").count()).toBe(0);
      const second = rows.nth(1).getByTestId("usage-estimated");
      expect(await second.textContent()).toBe(" estimated");
      expect(await second.getAttribute("title")).toMatch(/^1 call without the endpoint's usage/);
      const session = table.locator("tfoot tr").getByTestId("usage-estimated");
      expect(await session.getAttribute("title")).toMatch(/^1 call /);
      await screenshot(page, "11-usage-estimated");
      expectCleanPage({ page, ...opened });
    } finally {
      await fake.close();
    }
  });
});
