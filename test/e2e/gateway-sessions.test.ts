/**
 * Gateway sessions (issue 14) in chromium: a session recorded through `/v1` carries the config's
 * `gateway` mark and the tag `gateway`; the list marks its row and the session page its header,
 * saying where its requests went. Screenshots: test-artifacts/screenshots/14-gateway-*.png.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, requireChromium, screenshot, setUpLab } from "./harness.js";

requireChromium();

const e2e = setUpLab();
const { newPage } = e2e;

let nativeId = "";
let gatewayId = "";

beforeAll(async () => {
  nativeId = await e2e.lab.createSession("A native session", {
    tool_invocation_mode: "dual_agent",
    chat_agent: { model: "sim" },
  });
  // As the gateway would store it: an upstream's model, its mark, the tag.
  gatewayId = await e2e.lab.createSession("Where is my order?", {
    tool_invocation_mode: "chat_agent_tools",
    chat_agent: {
      model: "openai:qwen3:8b",
      base_url: "http://127.0.0.1:11434/v1",
      api_key_env: "AGENT_LAB_GATEWAY_NO_KEY",
    },
    tags: ["gateway"],
    gateway: { requested_model: "local", upstream: "local", grouped_by: "header" },
  });
});

describe("gateway sessions in chromium", () => {
  it("marks the gateway session's row in the list and its page's header", async () => {
    const opened = await newPage();
    const { page } = opened;
    const row = (id: string) =>
      page.locator(`[data-testid="session-row"][data-session-id="${id}"]`);
    await expect.poll(() => row(gatewayId).count()).toBe(1);
    await expect.poll(() => row(nativeId).count()).toBe(1);
    const badge = row(gatewayId).getByTestId("gateway-badge");
    expect(await badge.textContent()).toBe("gateway");
    expect(await badge.getAttribute("title")).toContain("through the gateway (/v1)");
    expect(await row(nativeId).getByTestId("gateway-badge").count()).toBe(0);
    await screenshot(page, "14-gateway-list");

    await row(gatewayId).getByTestId("session-link").click();
    const header = page.locator(".session-header");
    await expect.poll(() => header.getByTestId("gateway-badge").count()).toBe(1);
    expect(await header.getByTestId("gateway-badge").getAttribute("title")).toBe(
      "Recorded through the gateway (/v1): upstream local; named by the X-Agent-Lab-Session header",
    );
    expect(await page.getByTestId("gateway-subtitle").textContent()).toBe(
      "Recorded through the gateway (/v1): upstream local; named by the X-Agent-Lab-Session header",
    );
    await screenshot(page, "14-gateway-session-page");

    await page.goto(new URL(`/sessions/${encodeURIComponent(nativeId)}`, e2e.lab.url).toString());
    await expect
      .poll(() => page.locator(".session-header h1").textContent())
      .toBe("A native session");
    expect(await page.getByTestId("gateway-badge").count()).toBe(0);
    expect(await page.getByTestId("gateway-subtitle").count()).toBe(0);
    expectCleanPage(opened);
  });
});
