import { describe, expect, it } from "vitest";
import {
  completionChunk,
  FakeOpenAIServer,
  sseEvent,
  streamReply,
} from "../../test/fake-openai-server.js";
import {
  answerRound,
  cutAnswer,
  fakeServerModel,
  pieces,
  toolRound,
} from "../../test/runtime/scripted-turns.js";
import { collectTurn, eventsOfType, useServerLab } from "../../test/runtime/turn-harness.js";
import { runCli, runCliJson } from "../cli/test-fixtures.js";
import { estimateCost, priceFor } from "../domain/prices.js";
import type { LabSessionConfigInput } from "../domain/session-config.js";
import type { UsageSummary } from "../domain/usage.js";
import { startTestServer } from "../server/test-fixtures.js";
import type { SessionStore } from "../store/session-store.js";

/** A streamed answer that says `text`, then goes silent with the connection open. */
function stalledAnswer(text: string) {
  return streamReply(
    [
      sseEvent(completionChunk({ role: "assistant", content: "" })),
      ...pieces(text).map((piece) => sseEvent(completionChunk({ content: piece }))),
    ],
    { ending: "stall" },
  );
}

/** Runs a chat_agent_tools turn on the fake server and cancels it once text has streamed. */
async function cancelledTurn(
  store: SessionStore,
  server: FakeOpenAIServer,
  sessionId: string,
  config: Omit<LabSessionConfigInput, "tool_invocation_mode"> = {},
) {
  server.enqueue(stalledAnswer("The write-ahead log lets readers and a writer work at once."));
  const controller = new AbortController();
  const turn = await collectTurn(
    {
      store,
      session_id: sessionId,
      config: { tool_invocation_mode: "chat_agent_tools", ...config },
      message: "explain sqlite wal mode",
      models: { chat: fakeServerModel(server) },
      signal: controller.signal,
    },
    (event) => {
      if (event.type === "text_delta") controller.abort(new Error("user cancelled"));
      return undefined;
    },
  );
  expect(turn.end?.status).toBe("cancelled");
  return turn;
}

describe("usage of a model call cut short", () => {
  const lab = useServerLab();

  it("a cancelled call that streamed text is recorded as one estimated call with its tokens", async () => {
    const turn = await cancelledTurn(lab.store, lab.server, "cancelled");
    const summary = lab.store.usageSummary("cancelled");
    expect(summary.calls).toHaveLength(1);
    const [call] = summary.calls;
    expect(call).toMatchObject({
      metric_key: "chat:1:1",
      agent: "chat_agent",
      call_kind: "chat_completion",
      estimated: true,
    });
    expect(call?.prompt_tokens).toBeGreaterThan(0);
    expect(call?.completion_tokens).toBeGreaterThan(0);
    expect(call?.ttft_ms).not.toBeNull();
    expect(call?.elapsed_ms).toBeGreaterThanOrEqual(call?.ttft_ms ?? 0);
    expect(summary.turns[0]).toMatchObject({ call_count: 1, estimated_count: 1 });
    expect(summary.turns[0]?.total_tokens).toBeGreaterThan(0);
    expect(summary.session).toMatchObject({ call_count: 1, estimated_count: 1 });
    // The turn's own report says the same, and the live usage event is labelled.
    expect(turn.end?.usage).toMatchObject({ call_count: 1, estimated_count: 1 });
    expect(eventsOfType(turn.events, "usage")).toMatchObject([
      { metric_key: "chat:1:1", estimated: true },
    ]);
    const audit = lab.store.listAuditLogs("cancelled").map((entry) => entry.event);
    expect(audit).toContain("usage_estimated");
  });

  it("a cancelled call on a priced model: labelled estimated, priced from the estimate, never 0", async () => {
    const chat_agent = { model: "openai:gpt-4.1-mini", base_url: lab.server.baseUrl };
    const turn = await cancelledTurn(lab.store, lab.server, "priced", { chat_agent });
    const [call] = lab.store.usageSummary("priced").calls;
    expect(call).toMatchObject({
      estimated: true,
      usage_source: "estimated",
      cost_usd: null,
      finish_reason: null,
      response_model: null,
    });
    const price = priceFor("openai:gpt-4.1-mini", {});
    expect(call?.cost_estimated_usd).toBeGreaterThan(0);
    expect(call?.cost_estimated_usd).toBeCloseTo(estimateCost(call as never, price) ?? -1, 12);
    expect(eventsOfType(turn.events, "usage")).toEqual([
      expect.objectContaining({
        estimated: true,
        usage_source: "estimated",
        cost_usd: call?.cost_estimated_usd,
        cost_source: "estimated",
      }),
    ]);
    // The endpoint is on loopback: the call's request was kept (its response as far as it came).
    const payload = lab.store.getCallPayload("priced", "chat:1:1");
    expect(JSON.parse(payload?.request_body ?? "null")).toMatchObject({ stream: true });
  });

  it("a call that fails after text streamed is recorded as estimated; a finished one is not", async () => {
    lab.server.enqueue(cutAnswer("Half an answer, then the connection drops"));
    const failed = await collectTurn({
      store: lab.store,
      session_id: "failed",
      config: { tool_invocation_mode: "chat_agent_tools" },
      message: "explain",
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(failed.end?.status).toBe("failed");
    lab.server.enqueue(answerRound("Fine now."));
    const done = await collectTurn({
      store: lab.store,
      session_id: "failed",
      message: "again",
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(done.end?.status).toBe("completed");
    const { calls, session } = lab.store.usageSummary("failed");
    expect(calls.map((call) => [call.metric_key, call.estimated])).toEqual([
      ["chat:1:1", true],
      ["chat:2:1", false],
    ]);
    expect(calls[0]?.total_tokens).toBeGreaterThan(0);
    expect(session.estimated_count).toBe(1);
  });

  it("records the dual_agent argument_fallback call cut short as fallback:t:r:e, estimated", async () => {
    // Round 1: the chat agent writes an event tag with broken arguments; the event agent (the same
    // fake endpoint) starts repairing them and its connection drops; round 2 answers.
    lab.server.enqueue(
      toolRound("dual_agent", [{ id: "x", name: "mock_search", arguments: '{"query": ' }]),
      cutAnswer('{"query": "sqlite'),
      answerRound("Could not search."),
    );
    const turn = await collectTurn({
      store: lab.store,
      session_id: "fallback",
      config: { tool_invocation_mode: "dual_agent" },
      message: "search for sqlite wal mode",
      models: { chat: fakeServerModel(lab.server), event: fakeServerModel(lab.server) },
    });
    expect(turn.end?.status).toBe("completed");
    const fallback = lab.store
      .usageSummary("fallback")
      .calls.find((call) => call.call_kind === "argument_fallback");
    expect(fallback).toMatchObject({
      agent: "event_agent",
      used_fallback: true,
      estimated: true,
      metric_key: expect.stringMatching(/^fallback:1:1:/),
    });
    expect(fallback?.completion_tokens).toBeGreaterThan(0);
  });

  it("the CLI's usage prints the estimate with a label, and --json carries it", async () => {
    await cancelledTurn(lab.store, lab.server, "cli");
    const json = await runCliJson<UsageSummary>(["--db", lab.path, "usage", "cli"]);
    expect(json.calls[0]).toMatchObject({ estimated: true });
    expect(json.session).toMatchObject({ call_count: 1, estimated_count: 1 });
    const table = await runCli(["--db", lab.path, "usage", "cli"]);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/^total\s+1\s.*\d\*\s/m);
    expect(table.stdout).toMatch(/\* estimated: 1 call without the endpoint's usage/);
  });
});

describe("HTTP API: usage of a cancelled call", () => {
  it("GET /usage and /usage/calls report the estimated call", async () => {
    const lab = await startTestServer();
    const server = await FakeOpenAIServer.start();
    try {
      await cancelledTurn(lab.store, server, "api");
      const response = await lab.api("/api/sessions/api/usage");
      expect(response.status).toBe(200);
      const usage = (await response.json()) as Omit<UsageSummary, "calls">;
      const calls = (await (await lab.api("/api/sessions/api/usage/calls")).json()) as {
        calls: UsageSummary["calls"];
        next_cursor: string | null;
      };
      expect(calls).toMatchObject({
        calls: [{ metric_key: "chat:1:1", estimated: true }],
        next_cursor: null,
      });
      expect(usage.session).toMatchObject({ call_count: 1, estimated_count: 1 });
      expect(usage.session.total_tokens).toBeGreaterThan(0);
    } finally {
      await server.close();
      await lab.close();
    }
  });
});
