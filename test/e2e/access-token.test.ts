/**
 * The access token in a real browser (Debian's chromium through playwright-core): the address
 * `serve` prints sets a cookie and leaves the address bar clean, the UI then works on the cookie
 * alone (API and the SSE turn stream), and a browser without it is told how to get in.
 */
import { describe, expect, it } from "vitest";
import {
  type LabPage,
  requireChromium,
  screenshot,
  sendMessage,
  setUpLab,
  waitForTurnStatus,
} from "./harness.js";

requireChromium();

const e2e = setUpLab();

/** A fresh browser context that has never seen the token. */
async function strangerPage(): Promise<LabPage> {
  return e2e.newPage({ width: 1280, height: 800 }, false);
}

describe("the access token in chromium", () => {
  it("the printed address sets an HttpOnly cookie and leaves the address bar; reloads and turns work on the cookie", async () => {
    const id = await e2e.lab.createSession("E2E: behind the token", {
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: { model: "sim" },
    });
    const { page, context, ...opened } = await strangerPage();
    await page.goto(e2e.lab.browserUrl);
    expect(page.url()).toBe(e2e.lab.url);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({
      name: `agent_lab_token_${new URL(e2e.lab.url).port}`,
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
    });
    // HttpOnly: the page's scripts cannot read it.
    expect(await page.evaluate("document.cookie")).toBe("");
    await page.getByText("E2E: behind the token").waitFor({ state: "visible" });

    await page.reload();
    expect(page.url()).toBe(e2e.lab.url);
    await page.getByText("E2E: behind the token").waitFor({ state: "visible" });

    await page.goto(new URL(`/sessions/${id}`, e2e.lab.origin).href);
    await page.getByTestId("message-input").waitFor({ state: "visible" });
    await sendMessage(page, "search for agent lab");
    await waitForTurnStatus(page, "completed");
    // The token went over the wire once, in the address opened; the cookie carried it since.
    expect(opened.requests.filter((url) => url.includes("token="))).toEqual([e2e.lab.browserUrl]);
    expect(opened.errors).toEqual([]);
    expect(opened.blocked).toEqual([]);
  });

  it("a browser without the token gets a page saying how to get in, not the app", async () => {
    const { page, context, ...opened } = await strangerPage();
    await page.goto(e2e.lab.url);
    const notice = page.getByTestId("token-page");
    await notice.waitFor({ state: "visible" });
    expect(await page.title()).toBe("Access token needed · Agent Lab");
    expect(await notice.textContent()).toMatch(/printed[\s\S]*\?token=/);
    expect(await page.getByTestId("new-session-form").count()).toBe(0);
    expect(await page.getByTestId("token-refused").count()).toBe(0);
    expect(await context.cookies()).toEqual([]);
    await screenshot(page, "token-needed");
    expect(opened.blocked).toEqual([]);
  });

  it("a wrong token in the address is refused and said so; pasting the right one lets the browser in", async () => {
    const { page, context } = await strangerPage();
    await page.goto(`${e2e.lab.url}?token=${"x".repeat(e2e.lab.token.length)}`);
    await page.getByTestId("token-refused").waitFor({ state: "visible" });
    // The refused token does not stay in the address bar either.
    expect(page.url()).toBe(e2e.lab.url);
    expect(await context.cookies()).toEqual([]);
    await screenshot(page, "token-refused");

    await page.getByTestId("token-input").fill(e2e.lab.token);
    await page.getByTestId("token-submit").click();
    await page.getByTestId("new-session-form").waitFor({ state: "visible" });
    expect(page.url()).toBe(e2e.lab.url);
    expect(await context.cookies()).toHaveLength(1);
  });
});
