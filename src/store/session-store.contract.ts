import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  SessionExistsError,
  SessionModeMismatchError,
  SessionNotFoundError,
  TurnExistsError,
  TurnNotFoundError,
} from "../domain/errors.js";
import type { ToolCallEvent } from "../domain/events.js";
import { callDetailContract } from "./call-detail.contract.js";
import { experimentRecordsContract } from "./experiment-records.contract.js";
import { recordBatchContract } from "./record-batch.contract.js";
import { sessionPagesContract } from "./session-pages.contract.js";
import type { SessionStore } from "./session-store.js";
import { sessionTransferContract } from "./session-transfer.contract.js";
import { turnClaimContract } from "./turn-claim.contract.js";

/**
 * The seed's expectations (shared/seed/test_sqlite_store.py), unchanged, for any SessionStore.
 * Backend-specific seed tests (legacy layouts, concurrent migration) live beside each backend.
 */
export interface StoreHarness {
  store: SessionStore;
  /** Makes the backend refuse any message with role "tool", as the seed's trigger does. */
  rejectToolMessages(): void | Promise<void>;
  cleanup(): void | Promise<void>;
}

export function describeSessionStoreContract(
  backend: string,
  makeHarness: () => StoreHarness | Promise<StoreHarness>,
): void {
  describe(`SessionStore contract: ${backend}`, () => {
    let harness: StoreHarness;
    let store: SessionStore;
    beforeEach(async () => {
      harness = await makeHarness();
      store = harness.store;
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    // Beyond the seed: deleting, listing overviews, exporting and importing sessions.
    sessionTransferContract(() => store);
    // Beyond the seed: one turn at a time per session, claimed atomically.
    turnClaimContract(() => store);
    // Beyond the seed: provider detail of calls, costs, reasoning text, captured payloads.
    callDetailContract(() => store);
    // Beyond the seed (issue 12): keyset pages and filters.
    sessionPagesContract(() => store);
    // Beyond the seed: experiments read in bulk (their records and the grouped list).
    experimentRecordsContract(() => store);
    // Beyond the seed: a round's rows in one transaction (appendRecords).
    recordBatchContract(() => store);

    it("persists session messages, audit and usage (seed: test_sqlite_store_persists_session_messages_audit_and_usage)", async () => {
      const sessionId = await store.createSession({
        title: "Debug first turn",
        config: { tool_invocation_mode: "chat_agent_tools", chat_agent: { model: "chat-model" } },
      });
      await store.startTurn(sessionId, { turn_index: 1, user_message: "debug this" });
      await store.appendMessage(sessionId, {
        turn_index: 1,
        message: { role: "user", content: "debug this" },
      });
      await store.appendMessage(sessionId, {
        turn_index: 1,
        message: { role: "assistant", content: "answer" },
      });
      await store.appendAudit(sessionId, {
        event: "chat_agent_request",
        details: { model: "chat-model" },
        turn_index: 1,
        round_index: 1,
      });
      await store.appendUsage(sessionId, {
        turn_index: 1,
        round_index: 1,
        usage: { prompt_tokens: 3, completion_tokens: 7, total_tokens: 10, cached_tokens: 2 },
        ttft_ms: 120,
        elapsed_ms: 450,
      });
      await store.completeTurn(sessionId, { turn_index: 1, wall_time_ms: 425 });

      const sessions = await store.listSessions();
      expect(sessions).toStrictEqual([
        {
          id: sessionId,
          title: "Debug first turn",
          created_at: sessions[0]?.created_at,
          updated_at: sessions[0]?.updated_at,
          turn_count: 1,
          total_tokens: 10,
        },
      ]);
      const session = await store.getSession(sessionId);
      expect(session?.config.chat_agent).toMatchObject({ model: "chat-model" });
      expect((await store.listMessages(sessionId)).map((message) => message.content)).toEqual([
        "debug this",
        "answer",
      ]);
      expect((await store.listAuditLogs(sessionId))[0]?.event).toBe("chat_agent_request");

      const usage = await store.usageSummary(sessionId);
      expect({ ...(usage.calls[0] ?? {}), created_at: "ignored" }).toStrictEqual({
        id: usage.calls[0]?.id,
        turn_index: 1,
        round_index: 1,
        prompt_tokens: 3,
        completion_tokens: 7,
        total_tokens: 10,
        cached_tokens: 2,
        ttft_ms: 120,
        elapsed_ms: 450,
        mode: "chat_agent_tools",
        agent: "chat_agent",
        call_kind: "chat_completion",
        event_id: null,
        event_name: null,
        used_fallback: false,
        tool_latency_ms: null,
        metric_key: null,
        estimated: false,
        // Beyond the seed (schema v3): what real providers report; nothing here.
        reasoning_tokens: 0,
        cache_write_tokens: 0,
        usage_source: "endpoint",
        cost_usd: null,
        cost_estimated_usd: null,
        response_model: null,
        response_id: null,
        system_fingerprint: null,
        finish_reason: null,
        refusal: false,
        raw_usage: null,
        created_at: "ignored",
      });
      expect(usage.turns).toStrictEqual([
        {
          turn_index: 1,
          prompt_tokens: 3,
          completion_tokens: 7,
          total_tokens: 10,
          cached_tokens: 2,
          elapsed_ms: 450,
          call_count: 1,
          fallback_count: 0,
          tool_count: 0,
          estimated_count: 0,
          reasoning_tokens: 0,
          cache_write_tokens: 0,
          cost_usd: null,
          reported_cost_count: 0,
          unpriced_count: 1,
          turn_wall_time_ms: 425,
        },
      ]);
      expect(usage.session).toStrictEqual({
        prompt_tokens: 3,
        completion_tokens: 7,
        total_tokens: 10,
        cached_tokens: 2,
        elapsed_ms: 450,
        call_count: 1,
        fallback_count: 0,
        tool_count: 0,
        estimated_count: 0,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: null,
        reported_cost_count: 0,
        unpriced_count: 1,
        turn_wall_time_ms: 425,
      });
    });

    it("persists typed calls without double counting metrics (seed: test_sqlite_store_persists_typed_calls_without_double_counting_metrics)", async () => {
      const sessionId = await store.createSession({
        title: "comparable metrics",
        config: { tool_invocation_mode: "dual_agent" },
      });
      await store.startTurn(sessionId, { turn_index: 1, user_message: "search" });
      await store.appendUsage(sessionId, {
        turn_index: 1,
        round_index: 1,
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
        ttft_ms: 10,
        elapsed_ms: 30,
        metadata: { metric_key: "chat:1:1" },
      });
      const fallbackMetadata = {
        agent: "event_agent",
        call_kind: "argument_fallback",
        event_id: "event-1",
        event_name: "mock_search",
        used_fallback: true,
        metric_key: "fallback:1:1:event-1",
      } as const;
      for (let attempt = 0; attempt < 2; attempt++) {
        await store.appendUsage(sessionId, {
          turn_index: 1,
          round_index: 1,
          usage: { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 },
          ttft_ms: 5,
          elapsed_ms: 20,
          metadata: fallbackMetadata,
        });
      }
      await store.appendUsage(sessionId, {
        turn_index: 1,
        round_index: 1,
        usage: { prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 },
        ttft_ms: null,
        elapsed_ms: 80,
        metadata: {
          agent: "event_kernel",
          call_kind: "tool_execution",
          event_id: "event-1",
          event_name: "mock_search",
          used_fallback: true,
          tool_latency_ms: 80,
          metric_key: "tool:1:1:event-1",
        },
      });
      await store.completeTurn(sessionId, { turn_index: 1, wall_time_ms: 95 });

      const usage = await store.usageSummary(sessionId);
      expect(usage.calls).toHaveLength(3);
      expect(usage.calls.map((call) => call.mode)).toEqual(Array(3).fill("dual_agent"));
      expect(usage.calls.map((call) => call.agent)).toEqual([
        "chat_agent",
        "event_agent",
        "event_kernel",
      ]);
      expect(usage.calls.map((call) => call.call_kind)).toEqual([
        "chat_completion",
        "argument_fallback",
        "tool_execution",
      ]);
      expect(usage.calls[1]?.event_id).toBe("event-1");
      expect(usage.calls[1]?.event_name).toBe("mock_search");
      expect(usage.calls[1]?.used_fallback).toBe(true);
      expect(usage.calls[2]?.tool_latency_ms).toBe(80);
      expect(usage.calls[2]?.total_tokens).toBe(0);
      const expected = {
        prompt_tokens: 6,
        completion_tokens: 9,
        total_tokens: 15,
        cached_tokens: 0,
        elapsed_ms: 130,
        call_count: 3,
        fallback_count: 1,
        tool_count: 1,
        estimated_count: 0,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: null,
        reported_cost_count: 0,
        // The chat call and the fallback; a tool execution costs nothing.
        unpriced_count: 2,
        turn_wall_time_ms: 95,
      };
      expect(usage.turns).toStrictEqual([{ turn_index: 1, ...expected }]);
      expect(usage.session).toStrictEqual(expected);
      expect(await store.usageRollups(sessionId)).toStrictEqual({
        turns: usage.turns,
        session: usage.session,
      });
      expect((await store.listSessions())[0]?.total_tokens).toBe(15);
    });

    it("sums call times to the hundredth, as the calls are recorded (no floating-point noise)", async () => {
      const sessionId = await store.createSession({ title: "sums", config: {} });
      const elapsed = [
        [0.1, 0.2],
        [5.21, 10.1],
      ];
      for (const [index, times] of elapsed.entries()) {
        const turn_index = index + 1;
        await store.startTurn(sessionId, { turn_index, user_message: "go" });
        for (const [call, elapsed_ms] of (times as number[]).entries()) {
          await store.appendUsage(sessionId, {
            turn_index,
            round_index: 1,
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            ttft_ms: null,
            elapsed_ms,
            metadata: { metric_key: `chat:${turn_index}:${call}` },
          });
        }
        await store.completeTurn(sessionId, { turn_index, wall_time_ms: [0.1, 0.2][index] ?? 0 });
      }
      const usage = await store.usageSummary(sessionId);
      // 0.1 + 0.2 is 0.30000000000000004 in floating point, 5.21 + 10.1 is 15.309999999999999.
      expect(usage.turns.map((turn) => turn.elapsed_ms)).toEqual([0.3, 15.31]);
      expect(usage.session.elapsed_ms).toBe(15.61);
      expect(usage.session.turn_wall_time_ms).toBe(0.3);
    });

    it("keeps metric keys unique within each session (seed: test_sqlite_store_metric_keys_are_unique_within_each_session)", async () => {
      for (const sessionId of ["session-a", "session-b"]) {
        await store.createSession({ title: sessionId, config: {}, session_id: sessionId });
        await store.startTurn(sessionId, { turn_index: 1, user_message: "test" });
        const recorded: boolean[] = [];
        for (let attempt = 0; attempt < 2; attempt++) {
          recorded.push(
            await store.appendUsage(sessionId, {
              turn_index: 1,
              round_index: 1,
              usage: { total_tokens: 1 },
              ttft_ms: null,
              elapsed_ms: 1,
              metadata: { metric_key: "chat:1:1" },
            }),
          );
        }
        expect(recorded).toEqual([true, false]);
      }
      expect((await store.usageSummary("session-a")).calls).toHaveLength(1);
      expect((await store.usageSummary("session-b")).calls).toHaveLength(1);
    });

    it("does not multiply session list totals by turns (seed: test_sqlite_store_session_list_totals_are_not_multiplied_by_turns)", async () => {
      const sessionId = await store.createSession({ title: "two turns", config: {} });
      for (const [turnIndex, tokens] of [
        [1, 2],
        [2, 4],
      ] as const) {
        await store.startTurn(sessionId, {
          turn_index: turnIndex,
          user_message: `turn ${turnIndex}`,
        });
        await store.appendUsage(sessionId, {
          turn_index: turnIndex,
          round_index: 1,
          usage: { total_tokens: tokens },
          ttft_ms: null,
          elapsed_ms: 10,
        });
      }
      expect((await store.listSessions())[0]?.turn_count).toBe(2);
      expect((await store.listSessions())[0]?.total_tokens).toBe(6);
    });

    it("round-trips assistant tool calls and tool replies (seed: test_sqlite_store_roundtrips_assistant_tool_calls_and_tool_replies)", async () => {
      const sessionId = await store.createSession({ title: "direct tools", config: {} });
      await store.startTurn(sessionId, { turn_index: 1, user_message: "search" });
      const toolCalls: ToolCallEvent[] = [
        {
          id: "call-1",
          name: "mock_search",
          arguments: { query: "agent lab" },
          raw_arguments: '{"query":"agent lab"}',
        },
        {
          id: "call-2",
          name: "mock_ticket",
          arguments: { title: "follow up" },
          raw_arguments: '{"title":"follow up"}',
        },
      ];
      await store.appendMessage(sessionId, {
        turn_index: 1,
        message: { role: "assistant", content: "", tool_calls: toolCalls },
      });
      await store.appendMessage(sessionId, {
        turn_index: 1,
        message: {
          role: "tool",
          content: '{"ok":true}',
          name: "mock_search",
          tool_call_id: "call-1",
        },
      });

      const messages = await store.listMessages(sessionId);
      expect(messages[0]?.tool_calls).toStrictEqual(toolCalls);
      expect(messages[1]?.tool_calls).toStrictEqual([]);
      expect(messages[1]?.tool_call_id).toBe("call-1");
    });

    describe.each([
      [{ tool_invocation_mode: "chat_agent_tools" }, "dual_agent", "chat_agent_tools"],
      [{}, "chat_agent_tools", "dual_agent"],
    ] as const)(
      "rejects a session mode mismatch without mutation (seed: test_sqlite_store_rejects_session_mode_mismatch_without_mutation)",
      (persistedConfig, requestedMode, persistedMode) => {
        it(`persisted=${persistedMode} requested=${requestedMode}`, async () => {
          const sessionId = await store.createSession({
            title: "mode locked",
            config: persistedConfig,
            session_id: "mode-locked",
          });
          await store.startTurn(sessionId, { turn_index: 1, user_message: "past user" });
          await store.appendMessage(sessionId, {
            turn_index: 1,
            message: { role: "user", content: "past user" },
          });
          const beforeSession = await store.getSession(sessionId);
          const beforeMessages = await store.listMessages(sessionId);

          const attempt = async () =>
            store.ensureSession(sessionId, {
              title: "ignored",
              config: { tool_invocation_mode: requestedMode, changed: true },
            });
          await expect(attempt()).rejects.toThrow(SessionModeMismatchError);
          await expect(attempt()).rejects.toThrow(
            `session tool invocation mode mismatch: persisted=${persistedMode} requested=${requestedMode}`,
          );

          expect(await store.getSession(sessionId)).toStrictEqual(beforeSession);
          expect(await store.listMessages(sessionId)).toStrictEqual(beforeMessages);
        });
      },
    );

    it("rolls back the whole protocol group (seed: test_sqlite_store_append_messages_rolls_back_the_whole_protocol_group)", async () => {
      const sessionId = await store.createSession({ title: "atomic group", config: {} });
      await store.startTurn(sessionId, { turn_index: 1, user_message: "use tool" });
      await harness.rejectToolMessages();
      const toolCall: ToolCallEvent = {
        id: "atomic-call",
        name: "mock_search",
        arguments: { query: "atomic" },
        raw_arguments: '{"query":"atomic"}',
      };

      await expect(async () =>
        store.appendMessages(sessionId, {
          turn_index: 1,
          messages: [
            { role: "assistant", content: "", tool_calls: [toolCall] },
            {
              role: "tool",
              content: '{"ok":true}',
              name: "mock_search",
              tool_call_id: "atomic-call",
            },
          ],
        }),
      ).rejects.toThrow("tool blocked");

      expect(await store.listMessages(sessionId)).toStrictEqual([]);
    });

    // Beyond the seed: the errors a caller meets, each naming what went wrong.

    it("ensureSession creates a missing session and accepts the same mode again", async () => {
      const config = { tool_invocation_mode: "chat_agent_tools", extra: { kept: [1, 2] } } as const;
      expect(await store.ensureSession("ensured", { title: "first", config })).toBe("ensured");
      expect(await store.ensureSession("ensured", { title: "second", config })).toBe("ensured");
      const session = await store.getSession("ensured");
      expect(session?.title).toBe("first");
      expect(session?.config).toStrictEqual(config);
      expect(session?.tool_invocation_mode).toBe("chat_agent_tools");
    });

    it("getStoredSessionConfig gives the config as stored, getSession's updated_at and an incarnation that changes only with a session made anew under the same id", async () => {
      expect(await store.getStoredSessionConfig("stored")).toBeNull();
      const config = { tool_invocation_mode: "dual_agent" as const, extra: { kept: [1, "two"] } };
      await store.createSession({ session_id: "stored", title: "s", config });
      const first = await store.getStoredSessionConfig("stored");
      expect(JSON.parse(first?.config_json ?? "null")).toStrictEqual(
        (await store.getSession("stored"))?.config,
      );
      expect(first?.updated_at).toBe((await store.getSession("stored"))?.updated_at);
      await new Promise((resolve) => setTimeout(resolve, 3));
      const { turn_index } = await store.claimTurn("stored", { user_message: "hi", runner: "r" });
      const claimed = await store.getStoredSessionConfig("stored");
      expect(claimed?.updated_at).not.toBe(first?.updated_at);
      expect(claimed?.updated_at).toBe((await store.getSession("stored"))?.updated_at);
      await store.completeTurn("stored", { turn_index, wall_time_ms: 1 });
      // The same row, written to: the same incarnation.
      const completed = await store.getStoredSessionConfig("stored");
      expect(typeof first?.incarnation).toBe("number");
      expect(Number.isSafeInteger(first?.incarnation)).toBe(true);
      expect([claimed?.incarnation, completed?.incarnation]).toStrictEqual([
        first?.incarnation,
        first?.incarnation,
      ]);
      // Exported, deleted and imported with another config: same timestamps, another text.
      const document = await store.exportSession("stored");
      await store.deleteSession("stored");
      expect(await store.getStoredSessionConfig("stored")).toBeNull();
      const edited = { ...config, extra: { kept: "edited" } };
      await store.importSession({ ...document, session: { ...document.session, config: edited } });
      const imported = await store.getStoredSessionConfig("stored");
      expect(imported?.updated_at).toBe((await store.getSession("stored"))?.updated_at);
      expect(JSON.parse(imported?.config_json ?? "null")).toStrictEqual(edited);
      expect(imported?.incarnation).not.toBe(first?.incarnation);
      // Imported again, unchanged: the very timestamps and text, but a row written anew.
      await store.deleteSession("stored");
      await store.importSession({ ...document, session: { ...document.session, config: edited } });
      const again = await store.getStoredSessionConfig("stored");
      expect([again?.updated_at, again?.config_json]).toStrictEqual([
        imported?.updated_at,
        imported?.config_json,
      ]);
      expect(again?.incarnation).not.toBe(imported?.incarnation);
      // Deleted and created again under its id.
      await store.deleteSession("stored");
      await store.createSession({ session_id: "stored", title: "s", config });
      expect((await store.getStoredSessionConfig("stored"))?.incarnation).not.toBe(
        again?.incarnation,
      );
    });

    it("refuses a new session id that is blank or holds a control character, naming why, and stores nothing", async () => {
      for (const [id, why] of [
        ["new\nline", "control characters"],
        ["a\tb", "control characters"],
        ["   ", "blank"],
      ] as const) {
        await expect(async () =>
          store.createSession({ title: "t", config: {}, session_id: id }),
        ).rejects.toThrow(why);
        await expect(async () =>
          store.ensureSession(id, { title: "t", config: {} }),
        ).rejects.toThrow(why);
      }
      await store.createSession({ title: "t", config: {}, session_id: "fine id" });
      const document = JSON.parse(JSON.stringify(await store.exportSession("fine id")));
      await expect(async () =>
        store.importSession(document, { session_id: "bad\u0007bell" }),
      ).rejects.toThrow("control characters");
      await expect(async () =>
        store.importSession({ ...document, session: { ...document.session, id: "line\nbreak" } }),
      ).rejects.toThrow("control characters");
      expect((await store.listSessions()).map((session) => session.id)).toStrictEqual(["fine id"]);
    });

    it("refuses to reuse a session id, to start a turn twice, and to write to unknown sessions or turns", async () => {
      await store.createSession({ title: "one", config: {}, session_id: "taken" });
      await expect(async () =>
        store.createSession({ title: "two", config: {}, session_id: "taken" }),
      ).rejects.toThrow(SessionExistsError);
      expect((await store.getSession("taken"))?.title).toBe("one");

      await store.startTurn("taken", { turn_index: 1, user_message: "hi" });
      await expect(async () =>
        store.startTurn("taken", { turn_index: 1, user_message: "again" }),
      ).rejects.toThrow(TurnExistsError);
      await expect(async () =>
        store.startTurn("missing", { turn_index: 1, user_message: "hi" }),
      ).rejects.toThrow(SessionNotFoundError);
      await expect(async () =>
        store.completeTurn("taken", { turn_index: 2, wall_time_ms: 1 }),
      ).rejects.toThrow(TurnNotFoundError);
      await expect(async () =>
        store.appendMessage("taken", { turn_index: 2, message: { role: "user", content: "x" } }),
      ).rejects.toThrow("turn 2 of session taken has not been started");
      await expect(async () =>
        store.appendUsage("taken", { turn_index: 2, round_index: 1, usage: {}, elapsed_ms: 1 }),
      ).rejects.toThrow(TurnNotFoundError);
      await expect(async () =>
        store.appendUsage("missing", { turn_index: 1, round_index: 1, usage: {}, elapsed_ms: 1 }),
      ).rejects.toThrow(SessionNotFoundError);
      await expect(async () =>
        store.appendAudit("missing", { event: "x", details: {} }),
      ).rejects.toThrow("session not found: missing");

      expect(await store.listMessages("taken")).toStrictEqual([]);
      expect((await store.usageSummary("taken")).calls).toStrictEqual([]);
      expect(await store.getSession("missing")).toBeNull();
    });

    it("rejects invalid input to every method with a message naming the field, storing nothing", async () => {
      await store.createSession({ title: "valid", config: {}, session_id: "valid" });
      await store.startTurn("valid", { turn_index: 1, user_message: "hi" });
      const snapshot = async () => ({
        sessions: await store.listSessions(),
        messages: await store.listMessages("valid"),
        audit: await store.listAuditLogs("valid"),
        usage: await store.usageSummary("valid"),
      });
      const before = await snapshot();
      const call = { turn_index: 1, round_index: 1, usage: {}, elapsed_ms: 1 };
      const cases: [string, () => unknown, RegExp][] = [
        [
          "createSession title",
          () => store.createSession({ title: 5 as never }),
          /createSession: title/,
        ],
        [
          "createSession mode",
          () =>
            store.createSession({ title: "x", config: { tool_invocation_mode: "both" as never } }),
          /createSession: config\.tool_invocation_mode/,
        ],
        [
          "createSession secret",
          () => store.createSession({ title: "x", config: { chat_agent: { api_key: "sk-live" } } }),
          /createSession: config\.chat_agent\.api_key: secrets are never stored/,
        ],
        [
          "createSession empty id",
          () => store.createSession({ title: "x", session_id: "" }),
          /session_id/,
        ],
        [
          "createSession unknown option",
          () => store.createSession({ title: "x", sessionId: "y" } as never),
          /createSession: .*sessionId/,
        ],
        [
          "ensureSession id",
          () => store.ensureSession("", { title: "x" }),
          /ensureSession: session_id/,
        ],
        [
          "startTurn turn_index",
          () => store.startTurn("valid", { turn_index: 0, user_message: "x" }),
          /startTurn: turn_index/,
        ],
        [
          "completeTurn wall_time_ms",
          () => store.completeTurn("valid", { turn_index: 1, wall_time_ms: -1 }),
          /completeTurn: wall_time_ms/,
        ],
        [
          "appendMessage role",
          () =>
            store.appendMessage("valid", {
              turn_index: 1,
              message: { role: "bot" as never, content: "x" },
            }),
          /appendMessage: message\.role/,
        ],
        [
          "appendMessage tool reply without its call id",
          () =>
            store.appendMessage("valid", {
              turn_index: 1,
              message: { role: "tool", content: "x" },
            }),
          /appendMessage: message\.tool_call_id/,
        ],
        [
          "appendMessages empty group",
          () => store.appendMessages("valid", { turn_index: 1, messages: [] }),
          /appendMessages: messages/,
        ],
        [
          "appendMessages bad tool call",
          () =>
            store.appendMessages("valid", {
              turn_index: 1,
              messages: [
                { role: "user", content: "fine" },
                { role: "assistant", content: "", tool_calls: [{ id: "c", name: "t" } as never] },
              ],
            }),
          /appendMessages: messages\.1\.tool_calls\.0\.arguments/,
        ],
        [
          "appendAudit event",
          () => store.appendAudit("valid", { event: "" }),
          /appendAudit: event/,
        ],
        [
          "appendUsage tokens",
          () => store.appendUsage("valid", { ...call, usage: { prompt_tokens: -1 } }),
          /appendUsage: usage\.prompt_tokens/,
        ],
        [
          "appendUsage agent",
          () => store.appendUsage("valid", { ...call, metadata: { agent: "robot" as never } }),
          /appendUsage: metadata\.agent/,
        ],
        [
          "appendUsage elapsed",
          () => store.appendUsage("valid", { ...call, elapsed_ms: Number.NaN }),
          /appendUsage: elapsed_ms/,
        ],
      ];
      for (const [label, act, message] of cases) {
        await expect(async () => act(), label).rejects.toThrow(message);
      }
      expect(await snapshot()).toStrictEqual(before);
    });

    it("lists turns with how each ended and who ran it", async () => {
      await store.createSession({ title: "turns", config: {}, session_id: "turns" });
      await store.startTurn("turns", { turn_index: 1, user_message: "one", runner: "101@host" });
      await store.completeTurn("turns", { turn_index: 1, wall_time_ms: 12 });
      await store.startTurn("turns", { turn_index: 2, user_message: "two" });
      await store.completeTurn("turns", { turn_index: 2, wall_time_ms: 5, status: "cancelled" });
      await store.startTurn("turns", { turn_index: 3, user_message: "three", runner: "202@host" });
      await expect(async () =>
        store.completeTurn("turns", { turn_index: 3, wall_time_ms: 1, status: "paused" as never }),
      ).rejects.toThrow(/completeTurn: status/);

      const turns = await store.listTurns("turns");
      expect(
        turns.map(({ turn_index, user_message, wall_time_ms, status, runner }) => ({
          turn_index,
          user_message,
          wall_time_ms,
          status,
          runner,
        })),
      ).toStrictEqual([
        {
          turn_index: 1,
          user_message: "one",
          wall_time_ms: 12,
          status: "completed",
          runner: "101@host",
        },
        { turn_index: 2, user_message: "two", wall_time_ms: 5, status: "cancelled", runner: null },
        {
          turn_index: 3,
          user_message: "three",
          wall_time_ms: null,
          status: "running",
          runner: "202@host",
        },
      ]);
      expect(turns[2]?.completed_at).toBeNull();
      expect(await store.listTurns("nobody")).toStrictEqual([]);
    });

    it("never stores a credential in the audit log", async () => {
      await store.createSession({ title: "audit", config: {}, session_id: "audit" });
      await store.appendAudit("audit", {
        event: "provider_request",
        details: {
          headers: { Authorization: "Bearer sk-secret" },
          api_key: "sk-secret",
          model: "m",
        },
      });
      const [entry] = await store.listAuditLogs("audit");
      expect(entry?.details).toStrictEqual({
        headers: { Authorization: "[redacted]" },
        api_key: "[redacted]",
        model: "m",
      });
      expect(entry?.turn_index).toBeNull();
    });

    it("finds an experiment's sessions by their config tag, oldest first", async () => {
      const tagged = (id: string, experiment: unknown) =>
        store.createSession({
          title: id,
          config: { tool_invocation_mode: "dual_agent", experiment },
          session_id: id,
        });
      await tagged("first", { id: "exp-1", run_key: "a/s/1" });
      await tagged("other", { id: "exp-2", run_key: "a/s/1" });
      await tagged("untagged", undefined);
      await tagged("second", { id: "exp-1", run_key: "a/s/2" });
      await tagged("not-an-object", "exp-1");

      const found = await store.findSessionsByExperiment("exp-1");
      expect(found.map((session) => session.id)).toStrictEqual(["first", "second"]);
      expect(found[1]).toStrictEqual(await store.getSession("second"));
      expect(found[1]?.config.experiment).toStrictEqual({ id: "exp-1", run_key: "a/s/2" });
      expect(await store.findSessionsByExperiment("nobody")).toStrictEqual([]);
      await store.deleteSession("first");
      expect((await store.findSessionsByExperiment("exp-1")).map((s) => s.id)).toStrictEqual([
        "second",
      ]);
    });
  });
}
