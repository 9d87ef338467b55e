/**
 * Issue 15 part 5 in chromium: the sessions page imports an exported session whose id is taken
 * under a new id, and names the file when it refuses one; the usage tab says how each turn ended.
 */
import { describe, expect, it } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../fake-openai-server.js";
import { expectCleanPage, openSession, requireChromium, screenshot, setUpLab } from "./harness.js";

requireChromium();

const e2e = setUpLab();

describe("importing a session file on the sessions page", () => {
  it("stores a taken id as ID-copy, and names the file it refuses", async () => {
    const id = await e2e.lab.createSession("E2E: to import", { tools: [] });
    await e2e.lab.runTurn(id, "hello");
    const document = await e2e.lab.api(`/api/sessions/${id}/export`);
    const text = JSON.stringify(document);

    const { page, ...opened } = await e2e.newPage();
    await page.goto(e2e.lab.url);
    const input = page.getByLabel("Import a session exported as JSON");
    const pick = (name: string, body: string) =>
      input.setInputFiles({ name, mimeType: "application/json", buffer: Buffer.from(body) });

    await pick("flaky.json", text);
    await page.waitForURL(`**/sessions/${id}-copy`);
    expect(e2e.lab.store.getSession(`${id}-copy`)?.title).toBe("E2E: to import");
    await page.goto(e2e.lab.url);
    await pick("flaky.json", text);
    await page.waitForURL(`**/sessions/${id}-copy-2`);

    await page.goto(e2e.lab.url);
    const alert = page.getByRole("alert");
    await pick("notes.json", "{ not json");
    await expect
      .poll(() => alert.textContent())
      .toMatch(/^Import failed: notes\.json: not valid JSON/);
    await pick("other.json", JSON.stringify({ hello: 1 }));
    await expect
      .poll(() => alert.textContent())
      .toBe(
        'Import failed: other.json: format: expected "agent-lab.session", found missing; not a session written by agent-lab export',
      );
    const broken = { ...(document as object), turns: [{ turn_index: 0 }] };
    await pick("broken.json", JSON.stringify(broken));
    await expect
      .poll(() => alert.textContent())
      .toMatch(/^Import failed: broken\.json: turns\.0\./);
    expect(await alert.textContent()).not.toMatch(/importSession|document:/);
    await screenshot(page, "15-import-error");
    // The refusals the page handled (the taken ids, the bad document) are the only errors logged.
    expect(opened.blocked).toEqual([]);
    expect(opened.errors).toEqual([
      ...Array(3).fill(
        "console.error: Failed to load resource: the server responded with a status of 409 (Conflict)",
      ),
      "console.error: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  });
});

describe("the usage tab's status column", () => {
  it("says how each turn ended, and marks a stopped turn's usage partial", async () => {
    const fake = await FakeOpenAIServer.start();
    try {
      fake.enqueue(streamReply(completionStream({ text: ["Fine."] })));
      fake.enqueue(errorReply(400, "bad request"));
      const sessionId = await e2e.lab.createSession("E2E: usage status", {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "openai:fake", base_url: fake.baseUrl, options: { max_retries: 0 } },
        tools: [],
      });
      await e2e.lab.runTurn(sessionId, "first");
      await e2e.lab.runTurn(sessionId, "second");

      const { page, ...opened } = await e2e.newPage();
      await openSession(page, e2e.lab, sessionId);
      await page.getByTestId("tab-usage").click();
      const table = page.getByTestId("usage-table");
      await table.waitFor({ state: "visible" });
      expect(await table.locator("thead th").nth(1).textContent()).toBe("Status");
      const statuses = table.locator("tbody tr").getByTestId("usage-status");
      expect(await statuses.allTextContents()).toEqual(["completed", "failed (partial)"]);
      expect(await statuses.nth(1).locator("span").first().getAttribute("title")).toBe(
        "failed: usage counts the calls made until the failure",
      );
      await screenshot(page, "15-usage-status");
      expectCleanPage({ page, ...opened });
    } finally {
      await fake.close();
    }
  });
});
