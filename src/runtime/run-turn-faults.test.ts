import { beforeEach, describe, expect, it } from "vitest";
import { completionChunk, errorReply, SSE_DONE, sseEvent } from "../../test/fake-openai-server.js";
import {
  answerRound,
  cutAnswer,
  fakeServerConfig,
  fakeServerModel,
  requestMessages,
  toolRound,
  toolRoundEvents,
} from "../../test/runtime/scripted-turns.js";
import {
  callSummary,
  collectTurn,
  completedTurn,
  eventsOfType,
  expectInOrder,
  MODES,
  messageShape,
  RecordingModel,
  slowTool,
  storedTurn,
  useServerLab,
} from "../../test/runtime/turn-harness.js";
import { type LabRunTurnOptions as RunTurnOptions, runTurn } from "../composition/run-turn.js";
import { createChatModel } from "../providers/create-chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import type { SimOptionsInput } from "../providers/sim/sim-options.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import type { Tool } from "../tools/tool.js";

/**
 * Turns that go wrong: a tool that times out, a turn that hits max_rounds, a provider that fails
 * mid-turn, a user who cancels. Each must leave a stored history a strict endpoint accepts (checked
 * after every test), a status that says what happened, and a session whose next turn runs.
 */

const SEARCH = "search for sqlite wal mode";
/** The sim's whole answer to "hello" when it is offered the built-in tools. */
const HELLO_ANSWER =
  "Hello! I'm the lab's simulated model. I can call mock_search, mock_ticket: ask me to search for something or to file a ticket.";

describe.each(MODES)("runTurn under faults, %s", (mode) => {
  let recorders: RecordingModel[];
  // Whatever the scenario, what is stored and what each model was sent are strict-valid.
  const lab = useServerLab({ strict: () => recorders });
  beforeEach(() => {
    recorders = [];
  });

  const sim = (options: SimOptionsInput = {}): RecordingModel => {
    const recorder = new RecordingModel(new SimChatModel({ options }));
    recorders.push(recorder);
    return recorder;
  };
  const simTurn = (message: string, extra: Partial<RunTurnOptions> = {}) =>
    collectTurn({
      store: lab.store,
      session_id: "s",
      message,
      config: { tool_invocation_mode: mode },
      models: { chat: sim() },
      ...extra,
    });
  const fakeTurn = (message: string, extra: Partial<RunTurnOptions> = {}) =>
    collectTurn({
      store: lab.store,
      session_id: "s",
      message,
      config: fakeServerConfig(mode, lab.server),
      models: { chat: fakeServerModel(lab.server) },
      ...extra,
    });
  const idOf = (endpointId: string, round = 1) =>
    mode === "dual_agent" ? `evt_1_${round}_1` : endpointId;
  /** The session goes on: a plain next turn completes. */
  const expectNextTurnRuns = async (turnIndex = 2) => {
    const end = await completedTurn({
      store: lab.store,
      session_id: "s",
      message: "hello",
      models: { chat: sim() },
    });
    expect(end.turn_index).toBe(turnIndex);
  };

  describe("6. tool timeout", () => {
    it("a custom slow tool times out; the reply says so and the turn completes, fast", async () => {
      const slow = slowTool({ timeout_ms: 50 });
      lab.server.enqueue(
        toolRound(mode, [{ id: "call_s", name: "slow_lookup", arguments: '{"query":"wal"}' }]),
        answerRound("The lookup timed out."),
      );
      const startedAt = performance.now();
      const { end } = await fakeTurn(SEARCH, {
        config: fakeServerConfig(mode, lab.server, { tools: ["mock_search", "slow_lookup"] }),
        tools: [...createBuiltinTools(), slow],
      });
      // The tool would answer after 5 s: a turn that ends well before did not wait for it (a
      // tighter bound only measures the machine's load).
      expect(performance.now() - startedAt).toBeLessThan(4_500);
      expect(end?.status).toBe("completed");
      const turn = storedTurn(lab.store, "s");
      expect(JSON.parse(turn.messages[2]?.content ?? "")).toEqual({
        error: "timed out after 50 ms",
      });
      expect(slow.calls).toMatchObject([{ args: { query: "wal" }, ended: "aborted" }]);
      const toolRow = turn.calls.find((row) => row.call_kind === "tool_execution");
      expect(toolRow).toMatchObject({ metric_key: `tool:1:1:${idOf("call_s")}` });
      expect(toolRow?.elapsed_ms).toBeGreaterThanOrEqual(45);
      expect(toolRow?.elapsed_ms).toBeLessThan(1_000);
      const toolEnd = lab.store.listAuditLogs("s").find((entry) => entry.event === "tool_end");
      expect(toolEnd?.details).toMatchObject({ ok: false, error_kind: "timeout" });
      expect(requestMessages(lab.server, 1).at(-1)?.content).toContain("timed out after 50 ms");
    });

    it("the sim's call to a slow mock_search times out and is answered from the error", async () => {
      const [, ticket] = createBuiltinTools();
      const slowSearch = slowTool({ name: "mock_search", timeout_ms: 50 });
      const { end } = await simTurn(SEARCH, { tools: [slowSearch, ticket as Tool] });
      expect(end?.status).toBe("completed");
      expect(end?.answer).toContain("timed out after 50 ms");
      expect(storedTurn(lab.store, "s").messages.map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
    });
  });

  describe("7. max_rounds", () => {
    it("a model that always calls a tool stops at max_rounds with every call answered", async () => {
      lab.server.enqueue(
        toolRound(mode, [{ id: "call_r1", name: "mock_search", arguments: '{"query":"a"}' }]),
        toolRound(
          mode,
          [{ id: "call_r2", name: "mock_search", arguments: '{"query":"b"}' }],
          "More.",
        ),
      );
      const { events, end } = await fakeTurn(SEARCH, {
        config: fakeServerConfig(mode, lab.server, { max_rounds: 2 }),
      });
      expect(end?.status).toBe("max_rounds");
      expect(end?.answer.trim()).toBe("More.");
      expect(lab.server.requests).toHaveLength(2);
      const turn = storedTurn(lab.store, "s");
      expect(turn.status).toBe("max_rounds");
      const [first, second] = [idOf("call_r1", 1), idOf("call_r2", 2)];
      expect(turn.messages.map(messageShape)).toEqual([
        { role: "user", tool_call_id: null, tool_calls: [] },
        { role: "assistant", tool_call_id: null, tool_calls: [`mock_search:${first}`] },
        { role: "tool", tool_call_id: first, tool_calls: [] },
        { role: "assistant", tool_call_id: null, tool_calls: [`mock_search:${second}`] },
        { role: "tool", tool_call_id: second, tool_calls: [] },
      ]);
      expect(turn.audit.find((entry) => entry.event === "max_rounds_reached")).toEqual({
        event: "max_rounds_reached",
        turn_index: 1,
        round_index: 2,
      });
      expect(turn.auditEvents.slice(-2)).toEqual(["max_rounds_reached", "turn_end"]);
      expect(turn.calls.map(callSummary).sort()).toEqual([
        "chat:1:1 chat_agent chat_completion",
        "chat:1:2 chat_agent chat_completion",
        `tool:1:1:${first} event_kernel tool_execution`,
        `tool:1:2:${second} event_kernel tool_execution`,
      ]);
      expect(eventsOfType(events, "round_start")).toHaveLength(2);
      await expectNextTurnRuns();
    });

    it("max_rounds 1 with the sim: the first round's tool still gets its reply", async () => {
      const { end } = await simTurn(SEARCH, {
        config: { tool_invocation_mode: mode, max_rounds: 1 },
      });
      expect(end?.status).toBe("max_rounds");
      expect(storedTurn(lab.store, "s").messages.map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
      ]);
      await expectNextTurnRuns();
    });
  });

  describe("8. provider failure mid-turn", () => {
    it("a stream cut after some text: failed, error event, partial text kept", async () => {
      lab.server.enqueue(cutAnswer("The answer is part"));
      const { events, end, error } = await fakeTurn("hello");
      expect(error).toBeNull();
      expect(end?.status).toBe("failed");
      expect(end?.answer).toBe("The answer is part");
      const [failure] = eventsOfType(events, "error");
      expect(failure?.code).toBe("provider_stream_error");
      const turn = storedTurn(lab.store, "s");
      expect(turn.status).toBe("failed");
      expect(turn.messages.map((message) => [message.role, message.content])).toEqual([
        ["user", "hello"],
        ["assistant", "The answer is part"],
      ]);
      // The failed call's tokens were spent: one row, counted by the lab and labelled estimated.
      expect(turn.calls).toMatchObject([{ metric_key: "chat:1:1", estimated: true }]);
      expectInOrder(turn.auditEvents, [
        "turn_start",
        "chat_agent_request",
        "chat_agent_error",
        "turn_failed",
        "turn_end",
      ]);
      const failed = lab.store.listAuditLogs("s").find((entry) => entry.event === "turn_failed");
      expect(failed?.details).toMatchObject({ code: "provider_stream_error" });

      lab.server.enqueue(answerRound("Back again."));
      const next = await fakeTurn("are you there?");
      expect(next.end).toMatchObject({ status: "completed", turn_index: 2, answer: "Back again." });
      // The next request carries the partial answer as an ordinary assistant message.
      expect(requestMessages(lab.server, 1).map((message) => message.role)).toEqual([
        "system",
        "user",
        "assistant",
        "user",
      ]);
    });

    it("a 400 in round 2, after a tool ran: failed, the tool group kept, next turn fine", async () => {
      lab.server.enqueue(
        toolRound(mode, [{ id: "call_f", name: "mock_search", arguments: '{"query":"wal"}' }]),
        errorReply(400, "This model's context is too long"),
      );
      const { events, end } = await fakeTurn(SEARCH);
      expect(end?.status).toBe("failed");
      expect(eventsOfType(events, "error")).toEqual([
        {
          type: "error",
          code: "provider_api_error",
          message: `model endpoint ${lab.server.baseUrl} answered 400: This model's context is too long`,
        },
      ]);
      const turn = storedTurn(lab.store, "s");
      const id = idOf("call_f");
      expect(turn.messages.map(messageShape)).toEqual([
        { role: "user", tool_call_id: null, tool_calls: [] },
        { role: "assistant", tool_call_id: null, tool_calls: [`mock_search:${id}`] },
        { role: "tool", tool_call_id: id, tool_calls: [] },
      ]);
      expect(turn.calls.map((row) => row.metric_key).sort()).toEqual([
        "chat:1:1",
        `tool:1:1:${id}`,
      ]);
      lab.server.enqueue(answerRound("Fine now."));
      const next = await fakeTurn("try again");
      expect(next.end?.status).toBe("completed");
    });

    it("a stream cut after a complete tool request: dual_agent's early dispatch is answered", async () => {
      // Everything of a tool round except its finish chunk, usage chunk and [DONE].
      const body = toolRoundEvents(
        mode,
        [{ id: "call_c", name: "mock_search", arguments: '{"query":"wal"}' }],
        "Searching.",
      ).slice(0, -3);
      lab.server.enqueue({ body, ending: "destroy" });
      const { end } = await fakeTurn(SEARCH);
      expect(end?.status).toBe("failed");
      const turn = storedTurn(lab.store, "s");
      if (mode === "dual_agent") {
        // The tag closed before the cut, so its tool had started: it is answered, not lost.
        expect(turn.messages.map(messageShape)).toEqual([
          { role: "user", tool_call_id: null, tool_calls: [] },
          { role: "assistant", tool_call_id: null, tool_calls: ["mock_search:evt_1_1_1"] },
          { role: "tool", tool_call_id: "evt_1_1_1", tool_calls: [] },
        ]);
        expect(turn.calls.map((row) => `${row.metric_key} ${row.estimated}`).sort()).toEqual([
          "chat:1:1 true",
          "tool:1:1:evt_1_1_1 false",
        ]);
      } else {
        // Native tool calls run only once the stream has finished: nothing ran, the text is kept.
        expect(turn.messages.map(messageShape)).toEqual([
          { role: "user", tool_call_id: null, tool_calls: [] },
          { role: "assistant", tool_call_id: null, tool_calls: [] },
        ]);
        expect(turn.calls).toMatchObject([{ metric_key: "chat:1:1", estimated: true }]);
      }
      expect(turn.messages[1]?.content.trim()).toBe("Searching.");
      await expectNextTurnRuns();
    });

    it("a 429 before the stream is retried: a retry event and audit entry, one usage row", async () => {
      lab.server.enqueue(
        errorReply(429, "Slow down", { "retry-after-ms": "10" }),
        answerRound("Hi."),
      );
      const retrying = createChatModel(
        { model: "openai:fake-model", base_url: lab.server.baseUrl, options: { max_retries: 1 } },
        { env: {} },
      );
      const { events, end } = await fakeTurn("hello", { models: { chat: retrying } });
      expect(end).toMatchObject({ status: "completed", answer: "Hi." });
      expect(eventsOfType(events, "retry")).toEqual([
        {
          type: "retry",
          round_index: 1,
          agent: "chat_agent",
          attempt: 1,
          status: 429,
          reason: "status 429: Slow down",
          delay_ms: 10,
        },
      ]);
      const turn = storedTurn(lab.store, "s");
      expect(turn.auditEvents).toEqual([
        "turn_start",
        "chat_agent_request",
        "provider_retry",
        "chat_agent_response",
        "turn_end",
      ]);
      expect(turn.calls.map(callSummary)).toEqual(["chat:1:1 chat_agent chat_completion"]);
      const response = lab.store.listAuditLogs("s").find((e) => e.event === "chat_agent_response");
      expect(response?.details).toMatchObject({ attempts: 2, finish_reason: "stop" });
    });

    it("a stream that ends without a finish reason is a failure, not an answer", async () => {
      lab.server.enqueue({
        body: [
          sseEvent(completionChunk({ role: "assistant", content: "" })),
          sseEvent(completionChunk({ content: "Looks done" })),
          SSE_DONE,
        ],
      });
      const { end } = await fakeTurn("hello");
      expect(end?.status).toBe("failed");
      expect(storedTurn(lab.store, "s").messages.at(-1)?.content).toBe("Looks done");
      await expectNextTurnRuns();
    });
  });

  describe("9. cancellation", () => {
    it("while the model streams slowly: cancelled, the partial text kept", async () => {
      const controller = new AbortController();
      const { events, end } = await collectTurn(
        {
          store: lab.store,
          session_id: "s",
          message: "hello",
          config: { tool_invocation_mode: mode },
          models: { chat: sim({ tokens_per_second: 30 }) },
          signal: controller.signal,
        },
        (event) => {
          if (event.type === "text_delta") controller.abort();
          return undefined;
        },
      );
      expect(end?.status).toBe("cancelled");
      const seen = eventsOfType(events, "text_delta")
        .map((event) => event.text)
        .join("");
      expect(seen.length).toBeGreaterThan(0);
      expect(end?.answer).toBe(seen);
      expect(eventsOfType(events, "error")).toEqual([]);
      const turn = storedTurn(lab.store, "s");
      expect(turn.status).toBe("cancelled");
      expect(turn.messages.map((message) => [message.role, message.content])).toEqual([
        ["user", "hello"],
        ["assistant", seen],
      ]);
      // A proper prefix of what the model would have said.
      expect(HELLO_ANSWER.startsWith(seen)).toBe(true);
      expect(seen.length).toBeLessThan(HELLO_ANSWER.length);
      expect(turn.auditEvents.slice(-2)).toEqual(["turn_cancelled", "turn_end"]);
      expect(turn.auditEvents).not.toContain("chat_agent_error");
      await expectNextTurnRuns();
    });

    it("while a slow tool runs: cancelled, the call answered 'interrupted', fast", async () => {
      const controller = new AbortController();
      const [, ticket] = createBuiltinTools();
      const slowSearch = slowTool({
        name: "mock_search",
        delay_ms: 5_000,
        onStart: () => controller.abort(),
      });
      const startedAt = performance.now();
      const { end } = await simTurn(SEARCH, {
        tools: [slowSearch, ticket as Tool],
        signal: controller.signal,
      });
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      expect(end?.status).toBe("cancelled");
      expect(slowSearch.calls).toMatchObject([{ ended: "aborted" }]);
      const turn = storedTurn(lab.store, "s");
      expect(turn.status).toBe("cancelled");
      const id = turn.messages[1]?.tool_calls[0]?.id ?? "";
      expect(turn.messages.map(messageShape)).toEqual([
        { role: "user", tool_call_id: null, tool_calls: [] },
        { role: "assistant", tool_call_id: null, tool_calls: [`mock_search:${id}`] },
        { role: "tool", tool_call_id: id, tool_calls: [] },
      ]);
      expect(turn.messages[2]?.content).toMatch(/interrupted/);
      if (mode === "dual_agent") expect(turn.messages[1]?.content).toContain("Let me search");
      expect(turn.auditEvents).toContain("turn_cancelled");
      // No round starts after the cancellation: no request to the model is logged for round 2.
      const requests = turn.audit.filter((entry) => entry.event === "chat_agent_request");
      expect(requests.map((entry) => entry.round_index)).toEqual([1]);
      await expectNextTurnRuns();
    });

    it("nothing runs before the consumer asks for the first event; leaving before that stores nothing", async () => {
      const options = {
        store: lab.store,
        session_id: "s",
        message: "hello",
        config: { tool_invocation_mode: mode },
        models: { chat: sim() },
      };
      const unasked = runTurn(options);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lab.store.listTurns("s")).toEqual([]);
      expect(await unasked.return()).toEqual({ value: undefined, done: true });
      expect(await unasked.next()).toEqual({ value: undefined, done: true });
      expect(lab.store.listTurns("s")).toEqual([]);
      // The same options, asked: the turn runs and ends with its turn_end.
      const events = runTurn(options);
      expect((await events.next()).value).toMatchObject({ type: "turn_start", turn_index: 1 });
      let last: IteratorResult<unknown, void>;
      do last = await events.next();
      while (!last.done && (last.value as { type: string }).type !== "turn_end");
      expect(last.value).toMatchObject({ type: "turn_end", status: "completed" });
      expect(await events.next()).toEqual({ value: undefined, done: true });
    });

    it("when the consumer stops listening: the turn is cancelled and stored as such", async () => {
      const { end } = await collectTurn(
        {
          store: lab.store,
          session_id: "s",
          message: "hello",
          config: { tool_invocation_mode: mode },
          models: { chat: sim({ tokens_per_second: 30 }) },
        },
        (event) => (event.type === "text_delta" ? "stop" : undefined),
      );
      expect(end).toBeUndefined();
      const turn = storedTurn(lab.store, "s");
      expect(turn.status).toBe("cancelled");
      expect(turn.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
      await expectNextTurnRuns();
    });
  });
});
