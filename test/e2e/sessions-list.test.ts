/**
 * The sessions list at more than a page of sessions, in chromium against the lab's server: the
 * first page shows, more loads on demand, search and filters narrow the list and live in the URL,
 * the sessions ticked for comparison stay ticked across pages and filters, and a filter the server
 * refuses shows the server's own error, and experiment runs stay hidden unless "Show experiment
 * runs" is ticked. Screenshots: test-artifacts/screenshots/12-sessions-*.png.
 */
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { readAllPages } from "./api-pages.js";
import { expectCleanPage, requireChromium, screenshot, setUpLab, WAIT_MS } from "./harness.js";

requireChromium();

const e2e = setUpLab();
const { newPage } = e2e;

interface Seed {
  id: string;
  title: string;
  mode: "dual_agent" | "chat_agent_tools";
  model: string;
  tags: string[];
  experiment: string | null;
}

const SESSIONS = 120;
/** Seeds 1, 41 and 81 are experiment runs: hidden from the list unless asked for. */
const EXPERIMENT_RUNS = 3;
const LISTED = SESSIONS - EXPERIMENT_RUNS;
const PAGE = 50;
const seeds: Seed[] = [];
/** The sessions that ran a turn (so are the most recently updated), newest last. */
const ran: Seed[] = [];

beforeAll(async () => {
  for (let index = 0; index < SESSIONS; index++) {
    const topic = index % 3 === 0 ? "Billing" : "Weather";
    const seed: Seed = {
      id: "",
      title: `${topic} question ${String(index).padStart(3, "0")}`,
      mode: index % 2 === 0 ? "dual_agent" : "chat_agent_tools",
      model: index % 6 === 5 ? "sim:small" : "sim",
      tags: [...(index % 4 === 0 ? ["alpha"] : []), ...(index % 5 === 0 ? ["beta"] : [])],
      experiment: index % 40 === 1 ? "exp-e2e" : null,
    };
    seed.id = await e2e.lab.createSession(seed.title, {
      tool_invocation_mode: seed.mode,
      chat_agent: { model: seed.model },
      event_agent: { model: "sim" },
      tools: ["mock_search"],
      tags: seed.tags,
      ...(seed.experiment ? { experiment: { id: seed.experiment } } : {}),
    });
    seeds.push(seed);
  }
  for (const seed of [seeds[7], seeds[8]]) {
    if (!seed) throw new Error("seeding went wrong");
    await e2e.lab.runTurn(seed.id, "search for agent lab");
    ran.push(seed);
  }
});

const rows = (page: Page) => page.getByTestId("session-row");
const rowOf = (page: Page, id: string) =>
  page.locator(`[data-testid="session-row"][data-session-id="${id}"]`);

async function shownIds(page: Page): Promise<string[]> {
  return rows(page).evaluateAll((elements) =>
    elements.map((element) => element.getAttribute("data-session-id") ?? ""),
  );
}

/** Waits until the list shows exactly `count` rows and no page is on its way. */
async function waitForRows(page: Page, count: number): Promise<void> {
  const busy = page.locator(
    '[data-testid="sessions-table"][aria-busy="true"], [data-testid="load-more-sessions"][aria-disabled="true"]',
  );
  await expect
    .poll(async () => ({ rows: await rows(page).count(), busy: await busy.count() }), {
      timeout: WAIT_MS,
    })
    .toEqual({ rows: count, busy: 0 });
}

/** The ids the API lists for these filters, every page. */
async function apiIds(filters: Record<string, string>): Promise<string[]> {
  const query = new URLSearchParams(filters).toString();
  const items = await readAllPages<{ id: string }>(
    e2e.lab,
    `/api/sessions${query ? `?${query}` : ""}`,
    "sessions",
  );
  return items.map((item) => item.id);
}

describe("the sessions list in chromium", () => {
  it("shows the first page, loads more on demand, and keeps the newest first", async () => {
    const opened = await newPage();
    const { page } = opened;
    await waitForRows(page, PAGE);
    // The sessions that ran a turn were updated last: they lead the list.
    const first = await shownIds(page);
    expect(first.slice(0, 2)).toEqual([ran[1]?.id, ran[0]?.id]);
    expect(await page.getByTestId("sessions-shown").textContent()).toMatch(/50 sessions shown/);
    expect(
      await rowOf(page, ran[1]?.id ?? "")
        .getByTestId("session-status")
        .textContent(),
    ).toBe("completed");
    await screenshot(page, "12-sessions-first-page-1280");

    // From the keyboard: the button keeps the focus while its page loads, so Enter goes on.
    await page.getByTestId("load-more-sessions").focus();
    await page.keyboard.press("Enter");
    await waitForRows(page, 2 * PAGE);
    expect(
      await page.evaluate(
        "document.activeElement && document.activeElement.getAttribute('data-testid')",
      ),
    ).toBe("load-more-sessions");
    await page.keyboard.press("Enter");
    await waitForRows(page, LISTED);
    expect(await page.getByTestId("load-more-sessions").count()).toBe(0);
    const all = await shownIds(page);
    expect(new Set(all)).toEqual(
      new Set(seeds.filter((seed) => !seed.experiment).map((seed) => seed.id)),
    );
    expect(all).toEqual(await apiIds({}));
    // The page fits the window at 1280 px: the table does not push it sideways.
    const overflow = await page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBe(0);
    expectCleanPage(opened);
  });

  it("back from a session shows the pages read, where they were, focused on the row left, then what changed", async () => {
    // One more session, deleted below: the list's counts stay the other tests'.
    const doomed = await e2e.lab.createSession("Deleted before going on", {});
    const opened = await newPage();
    const { page } = opened;
    page.on("dialog", (dialog) => void dialog.accept());
    await waitForRows(page, PAGE);
    await page.getByTestId("load-more-sessions").click();
    await waitForRows(page, 2 * PAGE);
    await page.getByTestId("load-more-sessions").click();
    await waitForRows(page, LISTED + 1);
    // Deleted once every page was read: the pages kept for Back drop it themselves.
    await rowOf(page, doomed).getByTestId("delete-session").click();
    await waitForRows(page, LISTED);
    const ids = await shownIds(page);
    const target = ids[LISTED - 10] as string;
    const link = rowOf(page, target).getByRole("link").first();
    await link.scrollIntoViewIfNeeded();
    await link.focus();
    const scrolled = await page.evaluate<number>("window.scrollY");
    expect(scrolled).toBeGreaterThan(1000);
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === `/sessions/${target}`);
    await page.getByTestId("session-turns").waitFor({ state: "visible" });
    // Made while the user reads that session: Back shows it once the list is read again.
    const made = await e2e.lab.createSession("Made while away", {});
    try {
      opened.requests.length = 0;
      // The list's reads held back until the kept rows are checked.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const listing = (url: URL) => url.pathname === "/api/sessions";
      await page.route(listing, async (route) => {
        await held;
        await route.continue();
      });
      await page.goBack();
      // At once the rows as they were read (the deleted one not among them), scrolled back.
      await expect.poll(() => shownIds(page)).toStrictEqual(ids);
      await expect.poll(() => page.evaluate<number>("window.scrollY")).toBe(scrolled);
      expect(
        await page.evaluate(
          "document.activeElement && document.activeElement.closest('[data-testid=session-row]').getAttribute('data-session-id')",
        ),
      ).toBe(target);
      // Then as the server has it now, without a Refresh: the new session first.
      release();
      await waitForRows(page, LISTED + 1);
      await page.unroute(listing);
      expect(await shownIds(page)).toStrictEqual([made, ...ids]);
      expect(
        opened.requests.filter((url) => new URL(url).pathname === "/api/sessions").length,
      ).toBe(3);
      await screenshot(page, "12-sessions-back-from-a-session");
      expectCleanPage(opened);
    } finally {
      await e2e.lab.api(`/api/sessions/${made}`, { method: "DELETE" });
    }
  });

  it("Forward, Back again and a reload each return to where the page stood", async () => {
    const opened = await newPage();
    const { page } = opened;
    await waitForRows(page, PAGE);
    const ids = await shownIds(page);
    const target = ids[30] as string;
    const link = rowOf(page, target).getByRole("link").first();
    await link.scrollIntoViewIfNeeded();
    const scrolled = await page.evaluate<number>("window.scrollY");
    expect(scrolled).toBeGreaterThan(500);
    await link.click();
    await page.waitForURL((url) => url.pathname === `/sessions/${target}`);
    await page.getByTestId("session-turns").waitFor({ state: "visible" });
    expect(await page.evaluate<number>("window.scrollY")).toBe(0);
    const focusedRow =
      "document.activeElement && document.activeElement.closest('[data-testid=session-row]') && document.activeElement.closest('[data-testid=session-row]').getAttribute('data-session-id')";
    // Back, Forward to the session (at its top, where it was left), Back again: the list and
    // its followed link each time.
    await page.goBack();
    await expect.poll(() => page.evaluate<number>("window.scrollY")).toBe(scrolled);
    await page.goForward();
    await page.getByTestId("session-turns").waitFor({ state: "visible" });
    await expect.poll(() => page.evaluate<number>("window.scrollY")).toBe(0);
    await page.goBack();
    await expect.poll(() => page.evaluate<number>("window.scrollY")).toBe(scrolled);
    await expect.poll(() => page.evaluate(focusedRow)).toBe(target);
    // A reload reads the list afresh and returns to where the page stood.
    await page.reload();
    await waitForRows(page, PAGE);
    await expect.poll(() => page.evaluate<number>("window.scrollY")).toBe(scrolled);
    expectCleanPage(opened);
  });

  it("narrows the list with search and filters kept in the URL", async () => {
    const opened = await newPage();
    const { page } = opened;
    await waitForRows(page, PAGE);

    await page.getByTestId("filter-q").fill("billing");
    await page.waitForURL((url) => url.searchParams.get("q") === "billing", { timeout: WAIT_MS });
    const billing = seeds.filter((seed) => seed.title.startsWith("Billing") && !seed.experiment);
    await waitForRows(page, billing.length);
    expect(new Set(await shownIds(page))).toEqual(new Set(billing.map((seed) => seed.id)));

    await page.getByTestId("filter-mode").selectOption("chat_agent_tools");
    await page.waitForURL((url) => url.searchParams.get("mode") === "chat_agent_tools");
    const billingNative = billing.filter((seed) => seed.mode === "chat_agent_tools");
    await waitForRows(page, billingNative.length);
    expect(new Set(await shownIds(page))).toEqual(new Set(billingNative.map((seed) => seed.id)));
    expect(await apiIds({ q: "billing", mode: "chat_agent_tools" })).toHaveLength(
      billingNative.length,
    );
    await screenshot(page, "12-sessions-filtered-1280");

    // The URL is the state: opened afresh, it shows the same list with the same fields.
    await page.reload();
    await waitForRows(page, billingNative.length);
    expect(await page.getByTestId("filter-q").inputValue()).toBe("billing");
    expect(await page.getByTestId("filter-mode").inputValue()).toBe("chat_agent_tools");

    // A tag on a row filters by it.
    await page.getByTestId("filter-reset").click();
    await waitForRows(page, PAGE);
    const tagged = seeds.filter((seed) => seed.tags.includes("beta"));
    await page.getByTestId("session-tag").filter({ hasText: "beta" }).first().click();
    await page.waitForURL((url) => url.searchParams.get("tag") === "beta");
    await waitForRows(page, tagged.length);
    expect(new Set(await shownIds(page))).toEqual(new Set(tagged.map((seed) => seed.id)));
    expect(await page.getByTestId("filter-tag").inputValue()).toBe("beta");

    // A model, typed: applied after a pause in typing.
    await page.getByTestId("filter-reset").click();
    await waitForRows(page, PAGE);
    const small = seeds.filter((seed) => seed.model === "sim:small" && !seed.experiment);
    await page.getByTestId("filter-model").fill("sim:small");
    await page.waitForURL((url) => url.searchParams.get("model") === "sim:small");
    await waitForRows(page, small.length);
    expect(new Set(await shownIds(page))).toEqual(new Set(small.map((seed) => seed.id)));

    // An experiment's sessions (the experiment page links here): a chip that removes the filter.
    const ofExperiment = seeds.filter((seed) => seed.experiment === "exp-e2e");
    await page.goto(new URL("/?experiment=exp-e2e", e2e.lab.origin).href);
    await waitForRows(page, ofExperiment.length);
    expect(new Set(await shownIds(page))).toEqual(new Set(ofExperiment.map((seed) => seed.id)));
    await page.getByTestId("filter-experiment").click();
    await page.waitForURL((url) => !url.searchParams.has("experiment"));
    await waitForRows(page, PAGE);

    // Status of the last turn: only the two sessions that ran one.
    expect(await page.getByTestId("filter-reset").count()).toBe(0);
    await page.getByTestId("filter-status").selectOption("completed");
    await waitForRows(page, ran.length);
    expect(await shownIds(page)).toEqual([ran[1]?.id, ran[0]?.id]);

    // A picked day is the browser's day (the table shows local times): its last millisecond there.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page.getByTestId("filter-updated-to").fill(tomorrow);
    await page.waitForURL((url) =>
      /^\d{4}-\d{2}-\d{2}T23:59:59\.999[+-]\d{2}:\d{2}$/.test(
        url.searchParams.get("updated_to") ?? "",
      ),
    );
    expect(await page.getByTestId("filter-updated-to").inputValue()).toBe(tomorrow);
    await waitForRows(page, ran.length);

    // Nothing matches: the empty state says so and offers the whole list back.
    await page.goto(new URL(`/?updated_from=${tomorrow}`, e2e.lab.origin).href);
    await page.getByTestId("sessions-empty").waitFor({ state: "visible" });
    expect(await page.getByTestId("sessions-empty").textContent()).toMatch(/No session matches/);
    expect(await rows(page).count()).toBe(0);
    expectCleanPage(opened);
  });

  it("asks for a day typed into a date field once, when it is whole, with an offset the server takes", async () => {
    const opened = await newPage();
    const { page } = opened;
    // West of Greenwich, where a year typed digit by digit (0002, 0020, 0202) was once asked
    // for at each digit, with the city's mean solar offset (-07:52:58) written as -07:52.9666…
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setTimezoneOverride", { timezoneId: "America/Los_Angeles" });
    await page.goto(e2e.lab.url);
    await waitForRows(page, PAGE);
    opened.requests.length = 0;
    // Focused, the field's first part (the month, in this locale) takes the keys.
    await page.getByTestId("filter-updated-from").focus();
    await page.keyboard.type("03012026");
    await page.waitForURL(
      (url) => url.searchParams.get("updated_from") === "2026-03-01T00:00:00.000-08:00",
    );
    // Every session was updated since: the whole list again, read once more for the bound.
    await waitForRows(page, PAGE);
    // Twice the filters' pause in typing (300 ms): a request still to come would be made by then.
    await page.waitForTimeout(600);
    const asked = opened.requests
      .map((url) => new URL(url))
      .filter((url) => url.pathname === "/api/sessions" && url.searchParams.has("updated_from"))
      .map((url) => url.searchParams.get("updated_from"));
    expect(asked).toStrictEqual(["2026-03-01T00:00:00.000-08:00"]);
    expect(await page.getByText("Could not load sessions").count()).toBe(0);
    expectCleanPage(opened);
  });

  it("hides experiment runs unless 'Show experiment runs' is ticked, kept in the URL", async () => {
    const opened = await newPage();
    const { page } = opened;
    // Twenty sessions on sim:small, one of them (seed 41) an experiment's run.
    const small = seeds.filter((seed) => seed.model === "sim:small");
    const run = small.find((seed) => seed.experiment);
    if (!run || small.length !== 20) throw new Error("seeding went wrong");
    await page.goto(new URL("/?model=sim:small", e2e.lab.origin).href);
    await waitForRows(page, small.length - 1);
    expect(await rowOf(page, run.id).count()).toBe(0);
    const toggle = page.getByTestId("filter-include-experiments");
    expect(await toggle.isChecked()).toBe(false);

    await toggle.check();
    await page.waitForURL((url) => url.searchParams.get("include") === "experiments");
    await waitForRows(page, small.length);
    expect(new Set(await shownIds(page))).toEqual(new Set(small.map((seed) => seed.id)));
    expect(await apiIds({ model: "sim:small", include: "experiments" })).toHaveLength(20);
    await screenshot(page, "12-sessions-experiment-runs-shown");

    // The URL is the state: a reload keeps the runs shown and the box ticked.
    await page.reload();
    await waitForRows(page, small.length);
    expect(await page.getByTestId("filter-include-experiments").isChecked()).toBe(true);

    await page.getByTestId("filter-include-experiments").uncheck();
    await page.waitForURL((url) => !url.searchParams.has("include"));
    await waitForRows(page, small.length - 1);
    expect(await rowOf(page, run.id).count()).toBe(0);

    // An experiment filter shows that experiment's runs: the box reads ticked and cannot be unticked.
    await page.goto(new URL("/?experiment=exp-e2e", e2e.lab.origin).href);
    await waitForRows(page, EXPERIMENT_RUNS);
    expect(await page.getByTestId("filter-include-experiments").isChecked()).toBe(true);
    expect(await page.getByTestId("filter-include-experiments").isDisabled()).toBe(true);
    expectCleanPage(opened);
  });

  it("keeps the sessions ticked for comparison across pages and filters", async () => {
    const opened = await newPage();
    const { page } = opened;
    await waitForRows(page, PAGE);
    const ids = await shownIds(page);
    const onFirstPage = seeds.find((seed) => seed.id === ids[2]);
    if (!onFirstPage) throw new Error("the first page shows no seeded session");
    await rowOf(page, onFirstPage.id).getByTestId("compare-checkbox").check();
    expect(await page.getByTestId("selection-count").textContent()).toBe("1 selected");

    await page.getByTestId("load-more-sessions").click();
    await waitForRows(page, 2 * PAGE);
    const secondPage = (await shownIds(page)).slice(PAGE);
    const onSecondPage = seeds.find((seed) => seed.id === secondPage[5]);
    if (!onSecondPage) throw new Error("the second page shows no seeded session");
    await rowOf(page, onSecondPage.id).getByTestId("compare-checkbox").check();
    expect(await page.getByTestId("selection-count").textContent()).toBe("2 selected");
    // Only the ticked rows read as selected.
    expect(await page.locator('[data-testid="session-row"][aria-selected="true"]').count()).toBe(2);

    // A search that hides the first pick keeps it picked, and the bar still names it.
    const hiding = onFirstPage.title.startsWith("Billing") ? "weather" : "billing";
    await page.getByTestId("filter-q").fill(hiding);
    await page.waitForURL((url) => url.searchParams.get("q") === hiding);
    await rowOf(page, onFirstPage.id).waitFor({ state: "detached" });
    expect(await page.getByTestId("selection-count").textContent()).toBe("2 selected");
    expect(await page.getByTestId("selection-name").allTextContents()).toEqual([
      onFirstPage.title,
      onSecondPage.title,
    ]);
    await screenshot(page, "12-sessions-selection-1280");

    await page.getByTestId("compare-selected").click();
    await page.waitForURL(/\/compare\?/, { timeout: WAIT_MS });
    const query = new URL(page.url()).searchParams;
    expect([query.get("a"), query.get("b")]).toEqual([onFirstPage.id, onSecondPage.id]);
    await page.getByTestId("compare-side-a").waitFor({ state: "visible" });
    await page.getByTestId("compare-side-b").waitFor({ state: "visible" });
    expect(await page.getByTestId("compare-side-a").locator("h2").textContent()).toBe(
      onFirstPage.title,
    );
    expect(await page.getByTestId("compare-select-a").inputValue()).toBe(onFirstPage.id);
    expect(await page.getByTestId("compare-select-b").inputValue()).toBe(onSecondPage.id);

    // Back on the list, the picks are still there; Clear empties them.
    await page.goBack();
    await page.getByTestId("clear-selection").waitFor({ state: "visible" });
    expect(await page.getByTestId("selection-count").textContent()).toBe("2 selected");
    await page.getByTestId("clear-selection").click();
    expect(await page.getByTestId("selection-count").textContent()).toMatch(/^Tick 2 sessions/);
    expect(await page.locator('[data-testid="session-row"][aria-selected="true"]').count()).toBe(0);
    expectCleanPage(opened);
  });

  it("shows the server's error, naming the parameter, for a filter it refuses", async () => {
    const opened = await newPage();
    const { page } = opened;
    for (const [name, value] of [
      ["status", "sideways"],
      ["updated_from", "last tuesday"],
    ] as const) {
      await page.goto(new URL(`/?${new URLSearchParams({ [name]: value })}`, e2e.lab.origin).href);
      const alert = page.getByRole("alert");
      await alert.waitFor({ state: "visible" });
      const text = (await alert.textContent()) ?? "";
      expect(text).toMatch(/Could not load sessions/);
      expect(text).toContain(name);
      expect(await rows(page).count()).toBe(0);
    }
    await screenshot(page, "12-sessions-bad-filter-1280");
    // The refused request is the page's own: its console error is the 400, nothing thrown.
    expect(opened.blocked).toEqual([]);
    expect(opened.errors.filter((error) => !/400/.test(error))).toEqual([]);
  });

  it("says the lab server did not answer when it cannot be reached, and reads on once it can", async () => {
    const opened = await newPage();
    const { page } = opened;
    await waitForRows(page, PAGE);
    // The next page's request finds no server, as after the lab was stopped.
    const gone = (url: URL) => url.pathname === "/api/sessions" && url.searchParams.has("cursor");
    await page.route(gone, (route) => route.abort("connectionrefused"));
    await page.getByTestId("load-more-sessions").click();
    const alert = page.getByRole("alert");
    await alert.waitFor({ state: "visible" });
    expect(await alert.textContent()).toMatch(
      /the lab server did not answer: it may have stopped \(start it again, then retry\)/,
    );
    expect(await alert.textContent()).not.toMatch(/Failed to fetch/);
    // What was read stays; the server back, the same button goes on.
    expect(await rows(page).count()).toBe(PAGE);
    await page.unroute(gone);
    await page.getByTestId("load-more-sessions").click();
    await waitForRows(page, 2 * PAGE);
    expect(opened.errors.every((error) => /ERR_CONNECTION_REFUSED/.test(error))).toBe(true);
  });

  it("shows sessions made elsewhere since it was read once Refresh reads it again", async () => {
    const opened = await newPage();
    const { page } = opened;
    await waitForRows(page, PAGE);
    // A gateway client, the CLI or another tab makes a session while the list is open.
    const made = await e2e.lab.createSession("Made while the list was open", {});
    await e2e.lab.runTurn(made, "hello");
    expect(await rowOf(page, made).count()).toBe(0);
    await page.getByTestId("refresh-sessions").click();
    await rowOf(page, made).waitFor({ state: "visible", timeout: WAIT_MS });
    expect((await shownIds(page))[0]).toBe(made);
    await waitForRows(page, PAGE);
    await e2e.lab.api(`/api/sessions/${made}`, { method: "DELETE" });
    expectCleanPage(opened);
  });
});
