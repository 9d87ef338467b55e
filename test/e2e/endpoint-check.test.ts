/**
 * The new-session form tests an endpoint before a session is created on it, in chromium: an
 * upstream of agent-lab.yaml whose models the server lists, and a base URL where nothing listens,
 * which creates no session until the user, shown the problem, asks again.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { LabConfigFile } from "../../src/domain/tool-sources.js";
import { closedLoopbackPort } from "../closed-port.js";
import { FakeOpenAIServer } from "../fake-openai-server.js";
import { expectCleanPage, requireChromium, screenshot, setUpLab, WAIT_MS } from "./harness.js";

requireChromium();

const SHOTS = "/tmp/shots-endpoints";
const endpoint = await FakeOpenAIServer.start();
afterAll(() => endpoint.close());

const e2e = setUpLab({
  runTurnDefaults: {
    labConfig: LabConfigFile.parse({
      upstreams: { local: { base_url: endpoint.baseUrl, model: "llama-3" } },
    }),
    env: {},
  },
});

async function keep(page: Parameters<typeof screenshot>[0], name: string): Promise<void> {
  const path = await screenshot(page, name);
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(path, `${SHOTS}/${name}.png`);
}

describe("the new-session form checks the endpoint", () => {
  it("lists an upstream's models and says the endpoint is ready", async () => {
    const opened = await e2e.newPage();
    const { page } = opened;
    await page.goto(e2e.lab.url);
    const form = page.getByTestId("new-session-form");
    await form.waitFor({ state: "visible" });
    await form.getByTestId("endpoint-upstream").waitFor({ state: "visible", timeout: WAIT_MS });
    const list = {
      status: 200,
      headers: { "content-type": "application/json" },
      body: [JSON.stringify({ data: [{ id: "llama-3" }, { id: "qwen-2.5" }] })],
    };
    endpoint.enqueue(list);
    await form.getByTestId("endpoint-upstream").selectOption("local");
    expect(await form.getByTestId("new-session-chat-model").inputValue()).toBe("openai:llama-3");
    expect(await form.getByTestId("endpoint-base-url").inputValue()).toBe(endpoint.baseUrl);
    await form.getByTestId("endpoint-test").click();
    const result = form.getByTestId("endpoint-check");
    await result.waitFor({ state: "visible", timeout: WAIT_MS });
    expect(await result.textContent()).toContain("✓ Endpoint ready");
    expect(await result.textContent()).toContain("model llama-3 is listed");
    const models = await form
      .getByTestId("endpoint-models")
      .locator("option")
      .evaluateAll((options) => options.map((option) => option.textContent));
    expect(models).toEqual(["llama-3", "qwen-2.5"]);
    expect(endpoint.requests.at(-1)).toMatchObject({ method: "GET", path: "/v1/models" });
    await keep(page, "endpoint-upstream-ready");
    expectCleanPage(opened);
  });

  it("a base URL where nothing listens: no session until 'Create anyway'", async () => {
    const { page } = await e2e.newPage();
    await page.goto(e2e.lab.url);
    const form = page.getByTestId("new-session-form");
    await form.waitFor({ state: "visible" });
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/v1`;
    await form.getByTestId("new-session-title").fill("E2E: refused endpoint");
    await form.getByTestId("new-session-chat-model").fill("openai:m");
    await form.getByTestId("endpoint-base-url").fill(url);
    const before = await e2e.lab.api<{ sessions: unknown[] }>("/api/sessions");
    await form.getByTestId("create-session").click();
    const problems = form.getByTestId("endpoint-problems");
    await problems.waitFor({ state: "visible", timeout: WAIT_MS });
    expect(await problems.textContent()).toBe(
      `connection refused at ${url}: is the server running?`,
    );
    expect(await form.getByTestId("create-session").textContent()).toBe("Create anyway");
    const after = await e2e.lab.api<{ sessions: unknown[] }>("/api/sessions");
    expect(after.sessions).toHaveLength(before.sessions.length);
    await keep(page, "endpoint-refused");

    await form.getByTestId("create-session").click();
    await page.waitForURL(/\/sessions\//, { timeout: WAIT_MS });
    const created = await e2e.lab.api<{ sessions: { config: Record<string, unknown> }[] }>(
      "/api/sessions",
    );
    expect(created.sessions).toHaveLength(before.sessions.length + 1);
  });
});
