/**
 * What the browser tests share: Debian's chromium driven by playwright-core, the lab's server in
 * the test process over a fresh SQLite file, pages that can reach that server and nothing else,
 * and screenshots under test-artifacts/screenshots (gitignored).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { CHROMIUM_PATH, HEADLESS_CHROMIUM } from "../../src/bench/headless-chromium.js";
import type { RunningServer, StartServerOptions } from "../../src/server/start-server.js";
import { parseSse, startTestServer } from "../../src/server/test-fixtures.js";
import type { SqliteSessionStore } from "../../src/store/sqlite/sqlite-session-store.js";
import { repoRoot } from "../paths.js";

export { CHROMIUM_PATH };
export const SCREENSHOT_DIR = join(repoRoot, "test-artifacts", "screenshots");
/** The longest any single wait in these tests may take. */
export const WAIT_MS = 15_000;

/** Fails loudly (never skips) when the browser is missing: CI installs it. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser tests need Debian's chromium at ${CHROMIUM_PATH}, and it is not there. ` +
        "`.ci/run` installs it (apt-get install chromium); on your machine run: sudo apt-get install chromium",
    );
  }
}

export async function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch(HEADLESS_CHROMIUM);
}

export interface Lab {
  /** The lab's address, without the token. */
  url: string;
  /** The address `serve` would print: `url` with `?token=…`, which sets the browser's cookie. */
  browserUrl: string;
  token: string;
  origin: string;
  server: RunningServer;
  store: SqliteSessionStore;
  /** JSON API call against the lab with its token; throws on a non-2xx status. */
  api<T = unknown>(path: string, init?: { method?: string; json?: unknown }): Promise<T>;
  /** Creates a session through the API and returns its id. */
  createSession(title: string, config: Record<string, unknown>): Promise<string>;
  /** Runs one turn through the API to its end; returns the SSE body. */
  runTurn(sessionId: string, message: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The lab's server on a free 127.0.0.1 port, serving the web UI built by the global setup, with
 * the token it makes by default (as `serve` runs it).
 */
export async function startLab(
  options: Partial<Omit<StartServerOptions, "store" | "webRoot">> = {},
): Promise<Lab> {
  const webRoot = join(repoRoot, "dist", "web");
  if (!existsSync(join(webRoot, "index.html"))) {
    throw new Error(`the web UI is not built in ${webRoot} (test/global-setup.ts builds it)`);
  }
  const lab = await startTestServer({ host: "127.0.0.1", ...options, webRoot });
  const { server, store } = lab;
  const origin = new URL(server.url).origin;
  const token = server.token;
  if (token === null) {
    await lab.close();
    throw new Error("the lab's server started without a token");
  }

  const call = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const method = init.method ?? (init.json === undefined ? "GET" : "POST");
    const response = await lab.api(path, { method, json: init.json });
    if (!response.ok) {
      throw new Error(`${method} ${path}: HTTP ${response.status} ${await response.text()}`);
    }
    return response;
  };

  return {
    url: server.url,
    browserUrl: server.browserUrl,
    token,
    origin,
    server,
    store,
    async api<T>(path: string, init: { method?: string; json?: unknown } = {}) {
      const response = await call(path, init);
      return (response.status === 204 ? undefined : await response.json()) as T;
    },
    async createSession(title, config) {
      const response = await call("/api/sessions", { json: { title, config } });
      const body = (await response.json()) as { session: { id: string } };
      return body.session.id;
    },
    async runTurn(sessionId, message) {
      const base = `/api/sessions/${encodeURIComponent(sessionId)}`;
      const response = await call(`${base}/turns`, { json: { message } });
      if (!response.body) throw new Error("the turn sent no stream");
      // A turn that files a ticket waits for approval: the harness approves each call its stream
      // asks about, through the API as a user clicking Approve would, so tests that set up
      // sessions get their tickets filed.
      const decoder = new TextDecoder();
      let text = "";
      let read = 0; // where the events not yet looked at begin
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        const end = text.lastIndexOf("\n\n");
        if (end < read) continue;
        for (const sse of parseSse(text.slice(read, end))) {
          if (sse.event !== "approval_required") continue;
          const { event_id } = JSON.parse(sse.data) as { event_id: string };
          await call(`${base}/approvals/${encodeURIComponent(event_id)}`, {
            json: { decision: "approve" },
          });
        }
        read = end + 2;
      }
      if (!text.includes("event: turn_end")) throw new Error(`the turn did not end:\n${text}`);
      return text;
    },
    async close() {
      await lab.close();
      const { logs } = lab;
      if (logs.length > 0) process.stderr.write(`lab server log:\n${logs.join("\n")}\n`);
    },
  };
}

export interface LabPage {
  page: Page;
  context: BrowserContext;
  /** Every URL the page asked for, the lab's included, in order. */
  requests: string[];
  /** Requests to anywhere but the lab, each refused before it left the browser. */
  blocked: string[];
  /** Uncaught exceptions and console errors of the page. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * A fresh context and page of `width` × `height`, which can reach the lab's origin only: any other
 * request is recorded in `blocked` and aborted, so a test sees an escape attempt without any
 * traffic leaving 127.0.0.1. Unless `signIn` is false, the page has opened the lab's tokenized
 * address once, as a user does, so the context holds the token cookie.
 */
export async function openPage(
  browser: Browser,
  lab: Lab,
  viewport: { width: number; height: number } = { width: 1280, height: 900 },
  signIn = true,
): Promise<LabPage> {
  const context = await browser.newContext({ viewport, serviceWorkers: "block" });
  context.setDefaultTimeout(WAIT_MS);
  const requests: string[] = [];
  const blocked: string[] = [];
  const errors: string[] = [];
  context.on("request", (request) => requests.push(request.url()));
  await context.route(
    (url) => url.origin !== lab.origin,
    async (route) => {
      blocked.push(route.request().url());
      await route.abort("blockedbyclient");
    },
  );
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console.error: ${message.text()}`);
  });
  if (signIn) {
    await page.goto(lab.browserUrl);
    if (page.url() !== lab.url) throw new Error(`signing in left the page at ${page.url()}`);
    // The tests look at what their own steps requested.
    requests.length = 0;
  }
  return {
    page,
    context,
    requests,
    blocked,
    errors,
    close: () => context.close(),
  };
}

export interface LabFixture {
  readonly browser: Browser;
  readonly lab: Lab;
  /** A page as `openPage` opens it, closed after the test. */
  newPage(viewport?: { width: number; height: number }, signIn?: boolean): Promise<LabPage>;
}

/**
 * A test file's chromium and lab: started before its tests (before the file's own `beforeAll`
 * hooks, which may seed the lab) and closed after them; the pages a test opens close after it.
 */
export function setUpLab(options?: Parameters<typeof startLab>[0]): LabFixture {
  let browser: Browser | undefined;
  let lab: Lab | undefined;
  const pages: LabPage[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
    lab = await startLab(options);
  });
  afterEach(async () => {
    for (const opened of pages.splice(0)) await opened.close();
  });
  afterAll(async () => {
    await browser?.close();
    await lab?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the lab is used before its beforeAll ran");
    return value;
  };
  return {
    get browser() {
      return started(browser);
    },
    get lab() {
      return started(lab);
    },
    async newPage(viewport, signIn) {
      const opened = await openPage(started(browser), started(lab), viewport, signIn);
      pages.push(opened);
      return opened;
    },
  };
}

/** Nothing left 127.0.0.1 and the page threw nothing. */
export function expectCleanPage(opened: LabPage): void {
  expect(opened.blocked).toEqual([]);
  expect(opened.errors).toEqual([]);
}

/** Saves a PNG of the page as test-artifacts/screenshots/NAME.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  // Let fonts and layout settle so the picture is the page as a person would see it.
  await page.evaluate("document.fonts.ready.then(() => undefined)");
  const viewport = page.viewportSize();
  const height = await page.evaluate<number>("document.documentElement.scrollHeight");
  // A window as tall as the page, rather than a full-page capture: the composer is sticky at the
  // bottom of the window and would otherwise be drawn over the middle of the conversation.
  if (viewport && height > viewport.height) {
    await page.setViewportSize({ width: viewport.width, height: Math.min(height, 4000) });
    await page.evaluate(
      "new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))",
    );
  }
  try {
    await page.screenshot({ path, animations: "disabled", caret: "hide" });
  } finally {
    if (viewport && height > viewport.height) await page.setViewportSize(viewport);
  }
  return path;
}

/** The session page's URL of a session. */
export function sessionUrl(lab: Lab, id: string): string {
  return new URL(`/sessions/${encodeURIComponent(id)}`, lab.origin).href;
}

/** Waits until the session page has loaded its record (the composer is there). */
export async function openSession(page: Page, lab: Lab, id: string): Promise<void> {
  await page.goto(sessionUrl(lab, id));
  await page.getByTestId("message-input").waitFor({ state: "visible" });
}

/** Types a message and sends it with the Send button. */
export async function sendMessage(page: Page, message: string): Promise<void> {
  await page.getByTestId("message-input").fill(message);
  await page.getByTestId("send-button").click();
}

/**
 * Waits for the status line to say `status` (completed, cancelled, …) and for the page to show the
 * stored record of the turn instead of its live copy (the page reloads it after the stream ends).
 */
export async function waitForTurnStatus(page: Page, status: string): Promise<void> {
  await page.locator(`[data-testid="turn-status"][data-status="${status}"]`).waitFor({
    state: "visible",
    timeout: WAIT_MS,
  });
  await page.locator(".turn-live").waitFor({ state: "detached", timeout: WAIT_MS });
  await page.locator(`[data-testid="turn-status"][data-status="${status}"]`).waitFor({
    state: "visible",
    timeout: WAIT_MS,
  });
}
