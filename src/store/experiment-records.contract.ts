import { expect, it } from "vitest";
import { InvalidInputError } from "../domain/errors.js";
import type { ExperimentListItem } from "../domain/experiment.js";
import type { ExperimentRecords } from "./experiment-records.js";
import type { SessionStore } from "./session-store.js";

/**
 * The experiments' bulk reads, for any SessionStore: an experiment's records (whole or a slice of
 * sessions at a time) and the grouped experiment list. Called inside
 * `describeSessionStoreContract`.
 */
/** The experiment tag of run `run` of `experiment`, as the runner writes it (a valid one). */
export function experimentTag(experiment: string, run: number, suite = `suite of ${experiment}`) {
  return {
    id: experiment,
    suite,
    cell: "cell",
    cell_label: "Cell",
    scenario: "scenario",
    category: "simple",
    repetition: run,
    run_key: `cell/scenario/${run}`,
    expect: [{}],
  };
}

export function experimentRecordsContract(getStore: () => SessionStore): void {
  /** A tagged session with one finished turn: two messages, a tool call, two calls, audit rows. */
  async function run(store: SessionStore, experiment: string, run: number): Promise<string> {
    const id = `${experiment}-${run}`;
    await store.createSession({
      session_id: id,
      title: id,
      config: { tool_invocation_mode: "dual_agent", experiment: experimentTag(experiment, run) },
    });
    await store.startTurn(id, { turn_index: 1, user_message: `hello ${run}` });
    await store.appendMessage(id, { turn_index: 1, message: { role: "user", content: "hi" } });
    await store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: `answer ${run}` },
    });
    await store.appendUsage(id, {
      turn_index: 1,
      round_index: 1,
      usage: { prompt_tokens: 10, completion_tokens: run, total_tokens: 10 + run },
      elapsed_ms: 5,
      metadata: { metric_key: "m1" },
    });
    await store.appendUsage(id, {
      turn_index: 1,
      round_index: 1,
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      elapsed_ms: 1,
      metadata: { metric_key: "t1", call_kind: "tool_execution", event_id: "e1" },
    });
    await store.appendAudit(id, { event: "tool_start", turn_index: 1, details: { n: run } });
    await store.appendAudit(id, {
      event: "tool_end",
      turn_index: 1,
      details: { event_id: "e1", ok: true },
    });
    await store.completeTurn(id, { turn_index: 1, wall_time_ms: 7 });
    return id;
  }

  /** What experimentRecords must hold for one session: what the per-session reads return. */
  async function expectRowsOf(store: SessionStore, records: ExperimentRecords, id: string) {
    expect(records.turns.get(id)).toStrictEqual(await store.listTurns(id));
    expect(records.messages.get(id)).toStrictEqual(await store.listMessages(id));
    expect(records.calls.get(id)).toStrictEqual((await store.usageSummary(id)).calls);
    expect(records.tool_ends.get(id)).toStrictEqual(
      (await store.listAuditLogs(id)).filter((entry) => entry.event === "tool_end"),
    );
  }

  it("experimentRecords reads an experiment's sessions, oldest first, with all their rows", async () => {
    const store = getStore();
    const ids = [await run(store, "exp", 1), await run(store, "exp", 2)];
    await run(store, "other", 1);
    await store.createSession({ title: "untagged", config: {} });
    // A session without turns still has (empty) rows.
    await store.createSession({
      session_id: "exp-3",
      title: "no turns",
      config: { experiment: experimentTag("exp", 3) },
    });
    ids.push("exp-3");

    const records = await store.experimentRecords("exp");
    expect(records.sessions).toStrictEqual(await store.findSessionsByExperiment("exp"));
    expect(records.sessions.map((session) => session.id)).toStrictEqual(ids);
    expect(records.next_cursor).toBeNull();
    for (const id of ids) await expectRowsOf(store, records, id);
    expect(records.calls.get("exp-3")).toStrictEqual([]);
    expect(records.tool_ends.get("exp-1")?.map((entry) => entry.details)).toStrictEqual([
      { event_id: "e1", ok: true },
    ]);

    const none = await store.experimentRecords("nope");
    expect(none.sessions).toStrictEqual([]);
    expect(none.turns.size).toBe(0);
  });

  it("experimentRecords reads a slice of sessions at a time, chained by next_cursor", async () => {
    const store = getStore();
    const ids: string[] = [];
    for (let index = 1; index <= 5; index++) ids.push(await run(store, "exp", index));

    const seen: string[] = [];
    let cursor: string | null = null;
    let slices = 0;
    do {
      const slice: ExperimentRecords = await store.experimentRecords("exp", {
        limit: 2,
        ...(cursor !== null ? { cursor } : {}),
      });
      slices += 1;
      expect(slice.sessions.length).toBeLessThanOrEqual(2);
      // Each slice holds its own sessions' rows, and only theirs.
      expect([...slice.turns.keys()]).toStrictEqual(slice.sessions.map((session) => session.id));
      for (const session of slice.sessions) await expectRowsOf(store, slice, session.id);
      seen.push(...slice.sessions.map((session) => session.id));
      cursor = slice.next_cursor;
    } while (cursor !== null);
    expect(seen).toStrictEqual(ids);
    expect(slices).toBe(3);

    // A limit that ends exactly at the last session says so.
    const whole = await store.experimentRecords("exp", { limit: 5 });
    expect(whole.sessions).toHaveLength(5);
    expect(whole.next_cursor).toBeNull();
  });

  it("experimentScoringRows holds what scoring reads of experimentRecords, in the same slices", async () => {
    const store = getStore();
    const ids = [await run(store, "exp", 1), await run(store, "exp", 2)];
    // A call answered by an error, one by plain output, and one without a reply (audited).
    await store.appendMessages(ids[1] as string, {
      turn_index: 1,
      messages: [
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "e1", name: "mock_search", arguments: { q: "x" }, raw_arguments: '{"q":"x"}' },
            { id: "e2", name: "mock_search", arguments: {}, raw_arguments: "{}" },
            { id: "e3", name: "mock_ticket", arguments: {}, raw_arguments: "{}" },
          ],
        },
        { role: "tool", content: '{"error": "no"}', name: "mock_search", tool_call_id: "e1" },
        { role: "tool", content: "plain output", name: "mock_search", tool_call_id: "e2" },
      ],
    });
    await store.createSession({
      session_id: "exp-3",
      title: "no turns",
      config: {
        experiment: experimentTag("exp", 3),
        chat_agent: { model: "m" },
        prices: { m: { input: 1, output: 2 } },
      },
    });
    ids.push("exp-3");

    for (const limit of [undefined, 2]) {
      let cursor: string | null = null;
      do {
        const page = { ...(limit !== undefined ? { limit } : {}), ...(cursor ? { cursor } : {}) };
        const records: ExperimentRecords = await store.experimentRecords("exp", page);
        const lean = await store.experimentScoringRows("exp", page);
        expect(lean.next_cursor).toBe(records.next_cursor);
        expect(lean.sessions.map((session) => session.id)).toStrictEqual(
          records.sessions.map((session) => session.id),
        );
        for (const session of records.sessions) {
          const { id, config } = session;
          const { repetition, run_key, ...rest } = config.experiment as Record<string, unknown>;
          const text = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
          expect(lean.sessions.find((entry) => entry.id === id)).toStrictEqual({
            id,
            tag_json: text(rest),
            repetition_json: text(repetition),
            run_key_json: text(run_key),
            chat_model_json: text((config.chat_agent as { model?: unknown } | undefined)?.model),
          });
          expect(lean.turns.get(id)).toStrictEqual(
            records.turns.get(id)?.map(({ turn_index, status, wall_time_ms }) => ({
              turn_index,
              status,
              wall_time_ms,
            })),
          );
          expect(lean.messages.get(id)).toStrictEqual(
            records.messages
              .get(id)
              ?.filter((message) => message.role === "assistant" || message.role === "tool")
              .map(({ turn_index, role, content, tool_call_id, tool_calls }) => ({
                turn_index,
                role,
                content: role === "tool" && !content.includes("error") ? "" : content,
                tool_call_id,
                tool_calls,
              })),
          );
          expect(lean.calls.get(id)).toStrictEqual(
            records.calls.get(id)?.map((call) => ({
              id: call.id,
              turn_index: call.turn_index,
              round_index: call.round_index,
              agent: call.agent,
              call_kind: call.call_kind,
              ttft_ms: call.ttft_ms,
              prompt_tokens: call.prompt_tokens,
              completion_tokens: call.completion_tokens,
              total_tokens: call.total_tokens,
              cached_tokens: call.cached_tokens,
              reasoning_tokens: call.reasoning_tokens,
              cache_write_tokens: call.cache_write_tokens,
              event_id: call.event_id,
              used_fallback: call.used_fallback,
              cost_usd: call.cost_usd,
              cost_estimated_usd: call.cost_estimated_usd,
            })),
          );
          // Only a session with a call left without a reply has its tool ends read.
          expect(lean.tool_ends.get(id)).toStrictEqual(
            id === ids[1]
              ? records.tool_ends
                  .get(id)
                  ?.map(({ turn_index, event, details }) => ({ turn_index, event, details }))
              : [],
          );
        }
        cursor = records.next_cursor;
      } while (cursor !== null);
    }
    const audited = (await store.experimentScoringRows("exp")).tool_ends;
    expect([...audited.values()].map((rows) => rows.length)).toStrictEqual([0, 1, 0]);
  });

  it("experimentScoringRows gives a failed turn's turn_failed row, and reads none for a run that did not fail", async () => {
    const store = getStore();
    const ok = await run(store, "fails", 1);
    const failed = "fails-2";
    await store.createSession({
      session_id: failed,
      title: failed,
      config: { tool_invocation_mode: "dual_agent", experiment: experimentTag("fails", 2) },
    });
    await store.startTurn(failed, { turn_index: 1, user_message: "hello 2" });
    await store.completeTurn(failed, { turn_index: 1, wall_time_ms: 5, status: "failed" });
    const reason = { code: "provider_connection_error", message: "connection refused" };
    await store.appendAudit(failed, { turn_index: 1, event: "turn_failed", details: reason });
    const rows = await store.experimentScoringRows("fails");
    expect(rows.turn_failures.get(failed)).toStrictEqual([
      { turn_index: 1, event: "turn_failed", details: reason },
    ]);
    expect(rows.turn_failures.get(ok)).toStrictEqual([]);
  });

  it("experimentRecords refuses a bad slice by name", async () => {
    const store = getStore();
    await expect(async () => store.experimentRecords("exp", { limit: 0 })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(async () => store.experimentRecords("exp", { cursor: "garbage" })).rejects.toThrow(
      /cursor: not a cursor of this list/,
    );
  });

  it("listExperimentSummaries groups the tagged sessions, latest first, a page at a time", async () => {
    const store = getStore();
    await run(store, "alpha", 1);
    await run(store, "alpha", 2);
    await run(store, "beta", 1);
    await run(store, "gamma", 1);
    await store.createSession({ title: "untagged", config: {} });
    // A tag that does not parse is no experiment.
    await store.createSession({ title: "broken", config: { experiment: { id: "broken" } } });

    const { items, next_cursor } = await store.listExperimentSummaries();
    expect(next_cursor).toBeNull();
    expect(items.map((item) => item.id).sort()).toStrictEqual(["alpha", "beta", "gamma"]);
    const sorted = [...items].sort(
      (left, right) =>
        right.last_created_at.localeCompare(left.last_created_at) ||
        left.id.localeCompare(right.id),
    );
    expect(items).toStrictEqual(sorted);
    const alpha = items.find((item) => item.id === "alpha") as ExperimentListItem;
    const alphaSessions = await store.findSessionsByExperiment("alpha");
    expect(alpha).toStrictEqual({
      id: "alpha",
      suite: "suite of alpha",
      sessions: 2,
      first_created_at: alphaSessions[0]?.created_at,
      last_created_at: alphaSessions[1]?.created_at,
      last_updated_at: [alphaSessions[0]?.updated_at, alphaSessions[1]?.updated_at].sort()[1],
      revision: expect.any(Number),
    });

    const paged: ExperimentListItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listExperimentSummaries({ limit: 1, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(1);
      paged.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(paged).toStrictEqual(items);

    const one = await store.listExperimentSummaries({ experiment: "beta" });
    expect(one.items.map((item) => [item.id, item.sessions])).toStrictEqual([["beta", 1]]);
    expect((await store.listExperimentSummaries({ experiment: "nope" })).items).toStrictEqual([]);
  });

  it("listExperimentSummaries moves last_updated_at when a run of the experiment goes on", async () => {
    const store = getStore();
    const id = await run(store, "exp", 1);
    const before = (await store.listExperimentSummaries({ experiment: "exp" })).items[0];
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.startTurn(id, { turn_index: 2, user_message: "again" });
    await store.completeTurn(id, { turn_index: 2, wall_time_ms: 1 });
    const after = (await store.listExperimentSummaries({ experiment: "exp" })).items[0];
    expect(after?.sessions).toBe(1);
    expect((after?.last_updated_at ?? "") > (before?.last_updated_at ?? "")).toBe(true);
    expect(after?.revision ?? 0).toBeGreaterThan(before?.revision ?? 0);
  });

  it("listExperimentSummaries refuses a bad page by name", async () => {
    const store = getStore();
    await expect(async () => store.listExperimentSummaries({ limit: 501 })).rejects.toThrow(
      /limit is at most 500/,
    );
    await expect(async () =>
      store.listExperimentSummaries({ cursor: Buffer.from("[1,2]").toString("base64url") }),
    ).rejects.toThrow(/cursor: not a cursor of this list/);
  });
}
