/**
 * The new-session form's tool list (GET /api/tools), system prompt and declared tools editor, and
 * the session page showing the tools in use and the system prompt as sent, in chromium.
 */
import { describe, expect, it } from "vitest";
import { createLabProviders } from "../../src/composition/lab-providers.js";
import { HttpToolDefinition } from "../../src/domain/tool-sources.js";
import { createHttpToolSource } from "../../src/tools/http/index.js";
import {
  expectCleanPage,
  requireChromium,
  screenshot,
  sendMessage,
  setUpLab,
  WAIT_MS,
  waitForTurnStatus,
} from "./harness.js";

requireChromium();

// A tool beyond the built-ins (never called), so the form can only list it by asking the server.
const e2e = setUpLab({
  runTurnDefaults: {
    providers: createLabProviders({
      sources: [
        {
          source: createHttpToolSource([
            HttpToolDefinition.parse({
              name: "weather_http",
              url: "http://127.0.0.1:9/weather",
              requires_approval: true,
            }),
          ]),
          prefix: null,
        },
      ],
    }),
  },
});

const PROMPT = "You are the E2E order desk.\nAnswer briefly.";
const DECLARED = JSON.stringify([
  {
    name: "lookup_order",
    description: "Look an order up",
    mock: { result: { status: "shipped" } },
  },
]);

describe("prompts and tools in the web UI", () => {
  it("creates a session with a system prompt and a declared tool, then shows both as used", async () => {
    const { page, ...opened } = await e2e.newPage();
    await page.goto(e2e.lab.url);
    const form = page.getByTestId("new-session-form");
    await form.waitFor({ state: "visible" });
    // The tool list is the server's.
    const offered = await e2e.lab.api<{ tools: { name: string }[] }>("/api/tools");
    await form.locator('input[name="tools"][value="mock_ticket"]').waitFor({ state: "visible" });
    const boxes = await form
      .locator('input[name="tools"]')
      .evaluateAll((inputs) =>
        inputs.map((input) => (input as unknown as { value: string }).value),
      );
    expect(boxes).toEqual(offered.tools.map((tool) => tool.name));
    expect(boxes).toContain("weather_http");
    expect(await form.locator("label", { hasText: "weather_http" }).textContent()).toBe(
      "weather_http (http) · needs approval",
    );

    const before = await e2e.lab.api<{ sessions: unknown[] }>("/api/sessions");
    await page.getByTestId("new-session-title").fill("E2E: prompts and tools");
    await page.getByTestId("new-session-mode").selectOption("chat_agent_tools");
    await form.locator('input[name="tools"][value="mock_ticket"]').uncheck();
    await page.getByTestId("new-session-system-prompt").fill(PROMPT);
    // Invalid JSON is refused in the page, and nothing is created.
    await page.getByTestId("new-session-declared-tools").fill("[{");
    await page.getByTestId("create-session").click();
    await form.getByText("Declared tools: not valid JSON").waitFor({ state: "visible" });
    const after = await e2e.lab.api<{ sessions: unknown[] }>("/api/sessions");
    expect(after.sessions).toHaveLength(before.sessions.length);

    await page.getByTestId("new-session-declared-tools").fill(DECLARED);
    await page.getByTestId("create-session").click();
    await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: WAIT_MS });
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1) ?? "");
    const detail = await e2e.lab.api<{ session: { config: Record<string, unknown> } }>(
      `/api/sessions/${encodeURIComponent(sessionId)}`,
    );
    expect(detail.session.config).toMatchObject({
      chat_agent: { system_prompt: PROMPT },
      tools: ["mock_search"],
      declared_tools: [{ name: "lookup_order" }],
    });

    await sendMessage(page, "search for agent lab");
    await waitForTurnStatus(page, "completed");
    const chips = await page.getByTestId("session-tool").allTextContents();
    expect(chips).toEqual(["mock_search", "lookup_order"]);
    await page.getByTestId("system-prompt").locator("summary").click();
    await page.getByTestId("system-prompt").getByText("(as sent)").waitFor({ state: "visible" });
    expect(await page.getByTestId("system-prompt-text").textContent()).toBe(PROMPT);
    await screenshot(page, "10-system-prompt-and-tools");
    expectCleanPage({ page, ...opened });
  });
});
