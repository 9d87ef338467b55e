import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextMillisecond } from "../../test/next-millisecond.js";
import type { SessionPageItem } from "../domain/session-query.js";
import type { ErrorBody } from "./http-errors.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

/** Issue 12: the session list and the per-session lists, a keyset page at a time over HTTP. */
describe("HTTP API: paged lists", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  interface ListBody {
    sessions: SessionPageItem[];
    next_cursor: string | null;
  }

  async function list(query: string): Promise<ListBody> {
    const response = await lab.api(`/api/sessions${query}`);
    expect(response.status).toBe(200);
    return (await response.json()) as ListBody;
  }

  async function expectInvalid(path: string, message: RegExp): Promise<void> {
    const response = await lab.api(path);
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("invalid_input");
    expect(body.error.message).toMatch(message);
  }

  function seed(): string[] {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      ids.push(
        lab.store.createSession({
          title: `Run ${index} ${index % 2 === 0 ? "even" : "odd"}`,
          config: {
            tool_invocation_mode: index < 2 ? "chat_agent_tools" : "dual_agent",
            chat_agent: { model: index === 4 ? "openai:gpt-4.1-mini" : "sim" },
            tags: index % 2 === 0 ? ["even"] : ["odd", "nightly"],
            ...(index === 3 ? { experiment: { id: "exp-7" } } : {}),
          },
        }),
      );
    }
    // The turn's write must fall in a later millisecond than the last session's creation: in the
    // same one, the order between them is the ids' (random), and the tests below read it.
    nextMillisecond();
    lab.store.startTurn(ids[1] as string, { turn_index: 1, user_message: "hi" });
    lab.store.completeTurn(ids[1] as string, { turn_index: 1, wall_time_ms: 5 });
    return ids;
  }

  it("GET /api/sessions pages newest first and hands every session out once", async () => {
    const ids = seed();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ListBody = await list(
        `?include=experiments&limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((session) => session.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    const all = await list("?include=experiments");
    expect(seen).toStrictEqual(all.sessions.map((session) => session.id));
    expect(new Set(seen)).toStrictEqual(new Set(ids));
    // ids[1] had the latest write (its turn), so it comes first.
    expect(seen[0]).toBe(ids[1]);
    expect(all.sessions[0]).toMatchObject({
      tags: ["nightly", "odd"],
      experiment_id: null,
      last_status: "completed",
      turn_count: 1,
    });
  });

  it("GET /api/sessions filters by title, mode, model, tag, status, experiment and date", async () => {
    const ids = seed();
    const titles = async (query: string) =>
      (await list(`${query}&include=experiments`)).sessions.map((session) => session.title).sort();
    expect(await titles("?q=ODD")).toStrictEqual(["Run 1 odd", "Run 3 odd"]);
    expect(await titles("?q=3")).toStrictEqual(["Run 3 odd"]);
    expect(await titles("?mode=chat_agent_tools")).toStrictEqual(["Run 0 even", "Run 1 odd"]);
    expect(await titles("?model=openai:gpt-4.1-mini")).toStrictEqual(["Run 4 even"]);
    expect(await titles("?tag=nightly")).toStrictEqual(["Run 1 odd", "Run 3 odd"]);
    expect(await titles("?status=completed")).toStrictEqual(["Run 1 odd"]);
    expect((await list("?status=none&include=experiments")).sessions).toHaveLength(4);
    expect(await titles("?experiment=exp-7")).toStrictEqual(["Run 3 odd"]);
    // Blank fields of a search form mean no filter.
    expect((await list("?q=&tag=&status=&cursor=&include=experiments")).sessions).toHaveLength(5);
    expect(await titles("?tag=even&mode=dual_agent&q=run")).toStrictEqual([
      "Run 2 even",
      "Run 4 even",
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(
      (await list(`?updated_from=${today}&updated_to=${today}&include=experiments`)).sessions,
    ).toHaveLength(5);
    expect((await list("?updated_to=2000-01-01")).sessions).toStrictEqual([]);
    const updated = lab.store.getSession(ids[0] as string)?.updated_at as string;
    expect(
      (await list(`?updated_from=${encodeURIComponent(updated)}&q=even&mode=chat_agent_tools`))
        .sessions,
    ).toHaveLength(1);
  });

  it("GET /api/sessions hides experiment runs unless asked for them", async () => {
    seed();
    const titles = async (query: string) =>
      (await list(query)).sessions.map((session) => session.title).sort();
    const others = ["Run 0 even", "Run 1 odd", "Run 2 even", "Run 4 even"];
    expect(await titles("")).toStrictEqual(others);
    expect(await titles("?tag=odd")).toStrictEqual(["Run 1 odd"]);
    expect(await titles("?include=experiments")).toStrictEqual([...others, "Run 3 odd"].sort());
    expect(await titles("?include=experiments&tag=odd")).toStrictEqual(["Run 1 odd", "Run 3 odd"]);
    // An experiment id asks for that experiment's runs.
    expect(await titles("?experiment=exp-7")).toStrictEqual(["Run 3 odd"]);
    expect(await titles("?experiments=only")).toStrictEqual(["Run 3 odd"]);
    expect(await titles("?include=")).toStrictEqual(others);
    await expectInvalid(
      "/api/sessions?include=everything",
      /^query: include: include must be experiments/,
    );
    await expectInvalid("/api/sessions?experiments=all", /^query: experiments: /);
    expect(await titles("?experiments=exclude")).toStrictEqual(others);
    expect(await titles("?experiments=include&tag=odd")).toStrictEqual(["Run 1 odd", "Run 3 odd"]);
    // Said twice, or runs asked for and left out: refused, not one word silently winning.
    await expectInvalid(
      "/api/sessions?include=experiments&experiments=exclude",
      /^query: include and experiments say the same thing/,
    );
    await expectInvalid(
      "/api/sessions?experiment=exp-7&experiments=exclude",
      /^query: experiment names an experiment's runs, and experiments=exclude/,
    );
    expect(await titles("?experiment=exp-7&experiments=only")).toStrictEqual(["Run 3 odd"]);
  });

  it("GET /api/sessions refuses a bad parameter with 400, naming it", async () => {
    seed();
    await expectInvalid("/api/sessions?limit=0", /^query: limit: limit must be at least 1/);
    await expectInvalid("/api/sessions?limit=501", /^query: limit: limit is at most 500/);
    await expectInvalid("/api/sessions?limit=ten", /^query: limit: /);
    await expectInvalid("/api/sessions?cursor=nonsense", /^cursor: not a cursor/);
    await expectInvalid("/api/sessions?status=done", /^query: status: /);
    await expectInvalid("/api/sessions?mode=both", /^query: mode: /);
    await expectInvalid(
      "/api/sessions?updated_from=yesterday",
      /^query: updated_from: must be a date \(YYYY-MM-DD\) or an ISO 8601 timestamp/,
    );
    await expectInvalid("/api/sessions?tag=has%20space", /^query: tag: a tag holds only/);
    await expectInvalid("/api/sessions?colour=red", /^query: .*colour/);
    // A cursor of another list is refused, not followed.
    const id = lab.store.createSession({ title: "many turns", config: {} });
    for (let turn = 1; turn <= 3; turn++) {
      lab.store.startTurn(id, { turn_index: turn, user_message: `m${turn}` });
    }
    const turns = (await (await lab.api(`/api/sessions/${id}/turns?limit=1`)).json()) as {
      next_cursor: string;
    };
    await expectInvalid(
      `/api/sessions?cursor=${encodeURIComponent(turns.next_cursor)}`,
      /^cursor: not a cursor of this list/,
    );
    await expectInvalid(
      `/api/sessions/${id}/messages?cursor=${encodeURIComponent(turns.next_cursor)}`,
      /^cursor: not a cursor of this session's messages/,
    );
  });

  it("pages a session's turns, messages, audit and calls oldest first", async () => {
    const id = lab.store.createSession({ title: "long", config: {} });
    for (let turn = 1; turn <= 3; turn++) {
      lab.store.startTurn(id, { turn_index: turn, user_message: `m${turn}` });
      lab.store.appendMessage(id, {
        turn_index: turn,
        message: { role: "user", content: `m${turn}` },
      });
      lab.store.appendAudit(id, { event: "step", details: { turn }, turn_index: turn });
      lab.store.appendUsage(id, {
        turn_index: turn,
        round_index: 1,
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        elapsed_ms: 1,
        metadata: { metric_key: `chat:${turn}:1` },
      });
    }
    const cases: [string, string, (row: Record<string, unknown>) => unknown][] = [
      ["turns", "turns", (row) => row.turn_index],
      ["messages", "messages", (row) => row.content],
      ["audit", "audit", (row) => (row.details as { turn: number }).turn],
      ["usage/calls", "calls", (row) => row.metric_key],
    ];
    for (const [path, key, value] of cases) {
      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
        const response = await lab.api(`/api/sessions/${id}/${path}?limit=2${query}`);
        expect(response.status).toBe(200);
        const body = (await response.json()) as Record<string, unknown>;
        seen.push(...(body[key] as Record<string, unknown>[]).map(value));
        cursor = body.next_cursor as string | null;
      } while (cursor !== null);
      expect(seen, path).toHaveLength(3);
      expect(seen, path).toStrictEqual([...seen].sort());
    }
    await expectInvalid(`/api/sessions/${id}/audit?limit=0`, /^query: limit: /);
    await expectInvalid(`/api/sessions/${id}/usage/calls?limit=x`, /^query: limit: /);
    const missing = await lab.api("/api/sessions/nobody/usage/calls?limit=5");
    expect(missing.status).toBe(404);
  });
});
