import { expect, it } from "vitest";
import { nextMillisecond } from "../../test/next-millisecond.js";
import { InvalidInputError, SessionNotFoundError } from "../domain/errors.js";
import type { Page } from "../domain/pagination.js";
import type { SessionPageItem, SessionQuery } from "../domain/session-query.js";
import type { SessionStore } from "./session-store.js";

/**
 * Issue 12: the keyset pages, for any SessionStore. Newest first for sessions (updated_at, then
 * id), oldest first for a session's turns, messages, audit and calls; every filter alone and
 * combined; cursors that are not the list's own refused by name.
 */
export function sessionPagesContract(getStore: () => SessionStore): void {
  async function all(store: SessionStore, query: SessionQuery = {}): Promise<SessionPageItem[]> {
    const items: SessionPageItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listSessionPage({ ...query, ...(cursor ? { cursor } : {}) });
      items.push(...page.sessions);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return items;
  }

  const titles = (items: SessionPageItem[]) => items.map((item) => item.title).sort();

  /** Six sessions with every filter's column set differently. */
  async function seed(store: SessionStore): Promise<string[]> {
    const configs = [
      { tool_invocation_mode: "chat_agent_tools", tags: ["red", "nightly"] },
      { tool_invocation_mode: "dual_agent", chat_agent: { model: "openai:gpt-4.1-mini" } },
      {
        tool_invocation_mode: "dual_agent",
        chat_agent: { model: "sim" },
        event_agent: { model: "openai:gpt-4.1-nano" },
        tags: ["red"],
      },
      { tool_invocation_mode: "chat_agent_tools", experiment: { id: "exp-1" }, tags: ["blue"] },
      { experiment: { id: "exp-1" } },
      { tool_invocation_mode: "dual_agent", tags: ["blue", "nightly"] },
    ] as const;
    const ids: string[] = [];
    for (const [index, config] of configs.entries()) {
      nextMillisecond();
      ids.push(
        await store.createSession({
          title: `Session ${index} ${["Alpha", "Beta"][index % 2]}`,
          config,
        }),
      );
    }
    return ids;
  }

  it("lists sessions newest first, with the filter columns, in the seed's overview shape", async () => {
    const store = getStore();
    const ids = await seed(store);
    const page = await store.listSessionPage({});
    expect(page.next_cursor).toBeNull();
    expect(page.sessions.map((item) => item.id)).toStrictEqual([...ids].reverse());
    const overviews = await store.listSessionOverviews();
    expect(
      page.sessions.map(
        ({ tags: _t, experiment_id: _e, last_status: _s, ...overview }) => overview,
      ),
    ).toStrictEqual(overviews);
    const byId = new Map(page.sessions.map((item) => [item.id, item]));
    expect(byId.get(ids[0] as string)).toMatchObject({
      tags: ["nightly", "red"],
      last_status: null,
    });
    expect(byId.get(ids[2] as string)).toMatchObject({
      chat_model: "sim",
      event_model: "openai:gpt-4.1-nano",
    });
    expect(byId.get(ids[3] as string)).toMatchObject({ experiment_id: "exp-1", tags: ["blue"] });
    expect(byId.get(ids[4] as string)).toMatchObject({
      tool_invocation_mode: "dual_agent",
      experiment_id: "exp-1",
      tags: [],
    });
  });

  it("filters by each column alone and combined (AND)", async () => {
    const store = getStore();
    const ids = await seed(store);
    await store.startTurn(ids[1] as string, { turn_index: 1, user_message: "go" });
    await store.completeTurn(ids[1] as string, {
      turn_index: 1,
      wall_time_ms: 5,
      status: "failed",
    });
    await store.startTurn(ids[5] as string, { turn_index: 1, user_message: "go" });
    const expectTitles = async (query: SessionQuery, expected: string[]) =>
      expect(titles(await all(store, { ...query, limit: 2 })), JSON.stringify(query)).toStrictEqual(
        expected.sort(),
      );
    await expectTitles({ q: "beta" }, ["Session 1 Beta", "Session 3 Beta", "Session 5 Beta"]);
    await expectTitles({ q: "SION 4" }, ["Session 4 Alpha"]);
    await expectTitles({ q: "4" }, ["Session 4 Alpha"]);
    await expectTitles({ q: "no such title" }, []);
    await expectTitles({ q: "100%" }, []);
    await expectTitles({ mode: "chat_agent_tools" }, ["Session 0 Alpha", "Session 3 Beta"]);
    await expectTitles({ mode: "dual_agent" }, [
      "Session 1 Beta",
      "Session 2 Alpha",
      "Session 4 Alpha",
      "Session 5 Beta",
    ]);
    await expectTitles({ model: "openai:gpt-4.1-mini" }, ["Session 1 Beta"]);
    // Either agent's model: the event agent's here, and sim is both agents' in most sessions.
    await expectTitles({ model: "openai:gpt-4.1-nano" }, ["Session 2 Alpha"]);
    expect(await all(store, { model: "sim", limit: 1 })).toHaveLength(5);
    await expectTitles({ tag: "red" }, ["Session 0 Alpha", "Session 2 Alpha"]);
    await expectTitles({ tag: "nightly" }, ["Session 0 Alpha", "Session 5 Beta"]);
    await expectTitles({ tag: "green" }, []);
    await expectTitles({ status: "failed" }, ["Session 1 Beta"]);
    await expectTitles({ status: "running" }, ["Session 5 Beta"]);
    expect(await all(store, { status: "none" })).toHaveLength(4);
    await expectTitles({ experiment: "exp-1" }, ["Session 3 Beta", "Session 4 Alpha"]);
    await expectTitles({ tag: "blue", mode: "dual_agent", status: "running" }, ["Session 5 Beta"]);
    await expectTitles({ tag: "red", model: "sim", q: "alpha" }, [
      "Session 0 Alpha",
      "Session 2 Alpha",
    ]);
    await expectTitles({ experiment: "exp-1", mode: "chat_agent_tools", q: "beta" }, [
      "Session 3 Beta",
    ]);

    const listed = await all(store);
    const updated = listed.map((item) => item.updated_at).sort();
    const middle = updated[3] as string;
    expect(await all(store, { updated_from: middle })).toHaveLength(3);
    expect(await all(store, { updated_to: middle })).toHaveLength(4);
    expect(await all(store, { updated_from: middle, updated_to: middle })).toHaveLength(1);
    // Finer than a millisecond: just after `middle` leaves it out as a lower bound, keeps it as
    // an upper one (stored times hold milliseconds).
    const justAfter = middle.replace("Z", "1Z");
    expect(await all(store, { updated_from: justAfter })).toHaveLength(2);
    expect(await all(store, { updated_to: justAfter })).toHaveLength(4);
    expect(await all(store, { updated_from: middle.replace("Z", "0Z") })).toHaveLength(3);
    const day = middle.slice(0, 10);
    expect(await all(store, { updated_from: day, updated_to: day })).toHaveLength(6);
    expect(await all(store, { updated_to: "2000-01-01" })).toStrictEqual([]);
    // The last day and time a four-digit year holds: everything (its next midnight is year 10000).
    expect(await all(store, { updated_to: "9999-12-31" })).toHaveLength(6);
    expect(await all(store, { updated_to: "9999-12-31T23:59:59-05:00" })).toHaveLength(6);
    expect(await all(store, { updated_from: "9999-12-31" })).toStrictEqual([]);
    expect(await all(store, { updated_from: "2999-01-01T00:00:00+02:00" })).toStrictEqual([]);
  });

  it("searches titles without regard to case in any script, one character and up", async () => {
    const store = getStore();
    for (const title of ["s1 ÄÖÜ test", "s2 naïve", "s3 Zürich", "s4 ΣΟΦΙΑ", "s5 plain"]) {
      nextMillisecond();
      await store.createSession({ title, config: {} });
    }
    const found = async (q: string) => titles(await all(store, { q, limit: 2 }));
    for (const q of ["äö", "ÄÖ", "äöü", "ÄÖÜ", "Äö"])
      expect(await found(q), q).toStrictEqual(["s1 ÄÖÜ test"]);
    for (const q of ["ï", "Ï", "NAÏVE"]) expect(await found(q), q).toStrictEqual(["s2 naïve"]);
    for (const q of ["zü", "ZÜ", "zürich"]) expect(await found(q), q).toStrictEqual(["s3 Zürich"]);
    expect(await found("ü")).toStrictEqual(["s1 ÄÖÜ test", "s3 Zürich"]);
    for (const q of ["σο", "σοφ", "ΣΟ"]) expect(await found(q), q).toStrictEqual(["s4 ΣΟΦΙΑ"]);
    expect(await found("PLAIN")).toStrictEqual(["s5 plain"]);
  });

  it("leaves experiment sessions out, in, or alone on request; the default includes them", async () => {
    const store = getStore();
    await seed(store);
    const experimentRuns = ["Session 3 Beta", "Session 4 Alpha"];
    const others = ["Session 0 Alpha", "Session 1 Beta", "Session 2 Alpha", "Session 5 Beta"];
    const listed = async (query: SessionQuery) => titles(await all(store, { ...query, limit: 1 }));
    expect(await listed({})).toStrictEqual([...experimentRuns, ...others].sort());
    expect(await listed({ experiments: "include" })).toStrictEqual(
      [...experimentRuns, ...others].sort(),
    );
    expect(await listed({ experiments: "exclude" })).toStrictEqual(others);
    expect(await listed({ experiments: "only" })).toStrictEqual(experimentRuns);
    // Combined with the other filters (AND), including the ordered tag and model arms.
    expect(await listed({ experiments: "exclude", tag: "blue" })).toStrictEqual(["Session 5 Beta"]);
    expect(await listed({ experiments: "only", tag: "blue" })).toStrictEqual(["Session 3 Beta"]);
    expect(await listed({ experiments: "exclude", model: "sim", q: "alpha" })).toStrictEqual([
      "Session 0 Alpha",
      "Session 2 Alpha",
    ]);
    expect(await listed({ experiments: "exclude", experiment: "exp-1" })).toStrictEqual([]);
    await expect(
      Promise.resolve().then(() =>
        store.listSessionPage({ experiments: "hide" } as unknown as SessionQuery),
      ),
    ).rejects.toThrow(/experiments: experiments must be exclude, include or only/);
  });

  it("pages through every session exactly once at limits 1 and 500", async () => {
    const store = getStore();
    const ids = await seed(store);
    const one = await all(store, { limit: 1 });
    expect(one.map((item) => item.id)).toStrictEqual([...ids].reverse());
    const first = await store.listSessionPage({ limit: 1 });
    expect(first.sessions).toHaveLength(1);
    expect(first.next_cursor).toEqual(expect.any(String));
    const big = await store.listSessionPage({ limit: 500 });
    expect(big.sessions.map((item) => item.id)).toStrictEqual([...ids].reverse());
    expect(big.next_cursor).toBeNull();
    // The last page is full and still says it is the last.
    const exact = await store.listSessionPage({ limit: 6 });
    expect(exact.next_cursor).toBeNull();
  });

  it("hands a session updated between pages out at most once; the rest exactly once", async () => {
    const store = getStore();
    const ids = await seed(store);
    const seen: string[] = [];
    const first = await store.listSessionPage({ limit: 2 });
    seen.push(...first.sessions.map((item) => item.id));
    // One already handed out and one not yet reached are written to: both move to the front.
    const handedOut = ids[5] as string;
    const notYet = ids[1] as string;
    nextMillisecond();
    await store.startTurn(handedOut, { turn_index: 1, user_message: "again" });
    nextMillisecond();
    await store.startTurn(notYet, { turn_index: 1, user_message: "again" });
    let cursor = first.next_cursor;
    while (cursor !== null) {
      const page = await store.listSessionPage({ limit: 2, cursor });
      seen.push(...page.sessions.map((item) => item.id));
      cursor = page.next_cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids.filter((id) => id !== notYet)) expect(seen).toContain(id);
    // The moved session is behind the cursor now: a fresh first page shows it, newest first.
    expect(
      (await store.listSessionPage({ limit: 2 })).sessions.map((item) => item.id),
    ).toStrictEqual([notYet, handedOut]);
  });

  it("refuses bad cursors and bad filters, naming the parameter", async () => {
    const store = getStore();
    const ids = await seed(store);
    const refuse = async (query: unknown, message: RegExp) => {
      const attempt = async () => store.listSessionPage(query as SessionQuery);
      await expect(attempt()).rejects.toThrow(InvalidInputError);
      await expect(attempt()).rejects.toThrow(message);
    };
    await refuse({ limit: 0 }, /limit: limit must be at least 1/);
    await refuse({ limit: 501 }, /limit: limit is at most 500/);
    await refuse({ limit: 1.5 }, /limit: limit must be a whole number/);
    await refuse({ cursor: "garbage" }, /cursor: not a cursor of this list/);
    await refuse({ cursor: Buffer.from('["sessions",1,2]').toString("base64url") }, /cursor:/);
    await refuse({ status: "finished" }, /status: /);
    await refuse({ mode: "both" }, /mode: /);
    await refuse({ tag: "two words" }, /tag: a tag holds only letters, digits and _ \. : -/);
    await refuse({ updated_from: "last week" }, /updated_from: /);
    await refuse({ updated_to: "2026-13-40" }, /updated_to: /);
    await refuse({ q: "   " }, /q: /);
    await refuse({ q: "a\u0000b" }, /q: a search cannot hold a NUL character/);
    await refuse({ owner: "me" }, /owner/);
    const turns = await store.listTurnPage(ids[0] as string, { limit: 1 });
    expect(turns.next_cursor).toBeNull();
    await store.startTurn(ids[0] as string, { turn_index: 1, user_message: "a" });
    await store.startTurn(ids[0] as string, { turn_index: 2, user_message: "b" });
    const turnCursor = (await store.listTurnPage(ids[0] as string, { limit: 1 })).next_cursor;
    await refuse({ cursor: turnCursor }, /cursor: not a cursor of this list/);
    // Edited: the same list and session, a key that is not a number.
    const edited = Buffer.from(JSON.stringify(["turns", ids[0], "1"])).toString("base64url");
    await expect(
      Promise.resolve().then(() => store.listTurnPage(ids[0] as string, { cursor: edited })),
    ).rejects.toThrow(InvalidInputError);
  });

  it("refuses tags that are not 1-64 characters of [A-Za-z0-9_.:-], or more than 16", async () => {
    const store = getStore();
    const create = (tags: unknown) =>
      Promise.resolve().then(() => store.createSession({ title: "t", config: { tags } }));
    await expect(create(["ok", ""])).rejects.toThrow(
      /config\.tags\.1: a tag is 1 to 64 characters/,
    );
    await expect(create(["x".repeat(65)])).rejects.toThrow(/tags\.0: a tag is 1 to 64 characters/);
    await expect(create(["a b"])).rejects.toThrow(/tags\.0: a tag holds only/);
    await expect(create([1])).rejects.toThrow(/tags\.0: a tag is a string/);
    await expect(create("red")).rejects.toThrow(/tags: tags is a list of strings/);
    const seventeen = Array.from({ length: 17 }, (_, index) => `t${index}`);
    await expect(create(seventeen)).rejects.toThrow(/tags: a session has at most 16 tags/);
    expect(await store.listSessions()).toStrictEqual([]);
    const id = await store.createSession({
      title: "tagged",
      config: { tags: ["run:7", "model_a", "v1.2-rc", "x".repeat(64), "run:7"] },
    });
    const [item] = (await store.listSessionPage({ tag: "run:7" })).sessions;
    expect(item?.id).toBe(id);
    expect(item?.tags).toStrictEqual(["model_a", "run:7", "v1.2-rc", "x".repeat(64)]);
  });

  it("keeps last_status through start, claim, complete and an interrupted claim", async () => {
    const store = getStore();
    const id = await store.createSession({ title: "status", config: {} });
    const status = async () =>
      (await store.listSessionPage({})).sessions.find((item) => item.id === id)?.last_status;
    expect(await status()).toBeNull();
    await store.startTurn(id, { turn_index: 1, user_message: "one" });
    expect(await status()).toBe("running");
    await store.completeTurn(id, { turn_index: 1, wall_time_ms: 3, status: "max_rounds" });
    expect(await status()).toBe("max_rounds");
    const claimed = await store.claimTurn(id, { user_message: "two", runner: "1@gone" });
    expect(await status()).toBe("running");
    // A claim whose runner is gone interrupts the old turn; the new one is the latest.
    const next = await store.claimTurn(id, {
      user_message: "three",
      runner: "2@here",
      is_runner_alive: () => false,
    });
    expect(next.interrupted).toStrictEqual([claimed.turn_index]);
    expect(await status()).toBe("running");
    expect((await store.listSessionPage({ status: "interrupted" })).sessions).toStrictEqual([]);
    await store.completeTurn(id, {
      turn_index: next.turn_index,
      wall_time_ms: 1,
      status: "cancelled",
    });
    expect(await status()).toBe("cancelled");
    const exported = await store.exportSession(id);
    const copy = await store.importSession(exported, { session_id: "copy" });
    const copied = (await store.listSessionPage({ status: "cancelled" })).sessions.map(
      (item) => item.id,
    );
    expect(copied.sort()).toStrictEqual([copy, id].sort());
    await store.deleteSession(copy);
    expect((await store.listSessionPage({ status: "cancelled" })).sessions).toHaveLength(1);
  });

  it("pages a session's turns, messages, audit and calls oldest first, each row once", async () => {
    const store = getStore();
    const id = await store.createSession({ title: "long", config: {} });
    const other = await store.createSession({ title: "other", config: {} });
    for (let turn = 1; turn <= 5; turn++) {
      await store.startTurn(id, { turn_index: turn, user_message: `m${turn}` });
      await store.appendMessage(id, {
        turn_index: turn,
        message: { role: "user", content: `m${turn}` },
      });
      await store.appendAudit(id, { event: "step", details: { turn }, turn_index: turn });
      await store.appendUsage(id, {
        turn_index: turn,
        round_index: 1,
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        elapsed_ms: 1,
        metadata: { metric_key: `chat:${turn}:1` },
      });
    }
    const walk = async <T>(
      read: (cursor?: string) => Promise<Page<T>> | Page<T>,
      limit: number,
    ) => {
      const rows: T[] = [];
      let cursor: string | undefined;
      do {
        const page = await read(cursor);
        expect(page.items.length).toBeLessThanOrEqual(limit);
        rows.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return rows;
    };
    for (const limit of [1, 2, 5, 500]) {
      const page = (cursor?: string) => ({ limit, ...(cursor ? { cursor } : {}) });
      expect(await walk((c) => store.listTurnPage(id, page(c)), limit)).toStrictEqual(
        await store.listTurns(id),
      );
      expect(await walk((c) => store.listMessagePage(id, page(c)), limit)).toStrictEqual(
        await store.listMessages(id),
      );
      expect(await walk((c) => store.listAuditPage(id, page(c)), limit)).toStrictEqual(
        await store.listAuditLogs(id),
      );
      expect(await walk((c) => store.listUsageCalls(id, page(c)), limit)).toStrictEqual(
        (await store.usageSummary(id)).calls,
      );
    }
    expect(await store.listTurnPage(other, {})).toStrictEqual({ items: [], next_cursor: null });
    expect(await store.findUsageCall(id, "chat:3:1")).toStrictEqual(
      (await store.usageSummary(id)).calls[2],
    );
    expect(await store.findUsageCall(id, "chat:9:9")).toBeNull();

    const fail = (read: () => unknown) => Promise.resolve().then(read);
    for (const read of [
      () => store.listTurnPage("nobody", {}),
      () => store.listMessagePage("nobody", {}),
      () => store.listAuditPage("nobody", {}),
      () => store.listUsageCalls("nobody", {}),
      () => store.findUsageCall("nobody", "chat:1:1"),
    ]) {
      await expect(fail(read)).rejects.toThrow(SessionNotFoundError);
    }
    const messages = await store.listMessagePage(id, { limit: 2 });
    const cursor = messages.next_cursor as string;
    await expect(fail(() => store.listAuditPage(id, { cursor }))).rejects.toThrow(
      /cursor: not a cursor of this session's audit/,
    );
    await expect(fail(() => store.listMessagePage(other, { cursor }))).rejects.toThrow(
      /cursor: not a cursor of this session's messages/,
    );
    await expect(fail(() => store.listUsageCalls(id, { limit: 0 }))).rejects.toThrow(
      /limit: limit must be at least 1/,
    );
    await expect(fail(() => store.listTurnPage(id, { cursor: "x" }))).rejects.toThrow(
      InvalidInputError,
    );
  });

  it("finds the ids that start with a prefix, literally, in id order, up to a limit", async () => {
    const store = getStore();
    for (const id of ["abcd-2", "abcd-1", "ab*d-3", "ab_d-4", "zzzz"]) {
      await store.createSession({ session_id: id, title: id });
    }
    expect(await store.findSessionIdsByPrefix("abcd", 10)).toStrictEqual(["abcd-1", "abcd-2"]);
    expect(await store.findSessionIdsByPrefix("abcd", 1)).toStrictEqual(["abcd-1"]);
    // Wildcards of GLOB and LIKE match only themselves.
    expect(await store.findSessionIdsByPrefix("ab*", 10)).toStrictEqual(["ab*d-3"]);
    expect(await store.findSessionIdsByPrefix("ab_", 10)).toStrictEqual(["ab_d-4"]);
    expect(await store.findSessionIdsByPrefix("abc?", 10)).toStrictEqual([]);
    expect(await store.findSessionIdsByPrefix("nope", 10)).toStrictEqual([]);
  });
}
