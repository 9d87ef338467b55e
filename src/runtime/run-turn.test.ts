import { beforeEach, describe, expect, it } from "vitest";
import {
  answerRound,
  fakeServerConfig,
  fakeServerModel,
  requestMessages,
  toolRound,
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
  storedTurn,
  type TurnEndEvent,
  useServerLab,
} from "../../test/runtime/turn-harness.js";
import { policyApprover } from "../domain/approvals.js";
import type { ChatModel } from "../providers/chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import type { SimOptionsInput } from "../providers/sim/sim-options.js";
import { createBuiltinTools } from "../tools/builtin/index.js";

/**
 * The turn scenarios that go well or fail softly (a tool's error is data), in both modes, against
 * the simulated model and the scripted fake endpoint. Each asserts what was stored: messages, calls
 * with their metric keys, the audit trail and the turn's status, not only the answer. Faults,
 * cancellation are in run-turn-faults.test.ts; crashes, concurrency and refusals in
 * run-turn-isolation.test.ts.
 */

const SEARCH = "search for sqlite wal mode";

describe.each(MODES)("runTurn scenarios, %s", (mode) => {
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
  const simTurn = (message: string, chat: ChatModel = sim()) =>
    collectTurn({
      store: lab.store,
      session_id: "s",
      message,
      config: { tool_invocation_mode: mode },
      models: { chat },
    });
  const fakeTurn = (message: string) =>
    collectTurn({
      store: lab.store,
      session_id: "s",
      message,
      config: fakeServerConfig(mode, lab.server),
      models: { chat: fakeServerModel(lab.server) },
      approve: policyApprover("all"),
    });
  /** The id a tool call gets: the endpoint's in chat_agent_tools, the runtime's in dual_agent. */
  const idOf = (endpointId: string, round = 1, position = 1) =>
    mode === "dual_agent" ? `evt_1_${round}_${position}` : endpointId;

  /** The stored records of a completed one-tool turn, whichever model ran it. */
  function expectOneToolTurn(end: TurnEndEvent | undefined, toolName: string): string {
    expect(end?.status).toBe("completed");
    const turn = storedTurn(lab.store, "s");
    expect(turn.status).toBe("completed");
    const call = turn.messages[1]?.tool_calls[0];
    const id = call?.id ?? "missing";
    expect(turn.messages.map(messageShape)).toEqual([
      { role: "user", tool_call_id: null, tool_calls: [] },
      { role: "assistant", tool_call_id: null, tool_calls: [`${toolName}:${id}`] },
      { role: "tool", tool_call_id: id, tool_calls: [] },
      { role: "assistant", tool_call_id: null, tool_calls: [] },
    ]);
    expect(turn.messages[3]?.content).toBe(end?.answer);

    const summaries = turn.calls.map(callSummary);
    const expected = [
      "chat:1:1 chat_agent chat_completion",
      `tool:1:1:${id} event_kernel tool_execution`,
      "chat:1:2 chat_agent chat_completion",
    ];
    // dual_agent dispatches the tool while the chat agent still streams, so its row may come first.
    if (mode === "chat_agent_tools") expect(summaries).toEqual(expected);
    else expect([...summaries].sort()).toEqual([...expected].sort());
    expect(summaries.at(-1)).toBe(expected[2]);
    expect(turn.calls.map((row) => [row.metric_key, row.round_index, row.mode])).toEqual(
      expect.arrayContaining([
        ["chat:1:1", 1, mode],
        [`tool:1:1:${id}`, 1, mode],
        ["chat:1:2", 2, mode],
      ]),
    );
    const toolRow = turn.calls.find((row) => row.call_kind === "tool_execution");
    expect(toolRow).toMatchObject({ event_id: id, event_name: toolName, total_tokens: 0 });
    expect(toolRow?.tool_latency_ms).not.toBeNull();
    for (const row of turn.calls.filter((row) => row.agent === "chat_agent")) {
      expect(row.total_tokens).toBeGreaterThan(0);
      expect(row.ttft_ms).not.toBeNull();
    }

    const required = [
      "turn_start",
      "chat_agent_request",
      "event_detected",
      "tool_start",
      "tool_end",
      "chat_agent_request",
      "chat_agent_response",
      "turn_end",
    ];
    if (mode === "chat_agent_tools") {
      expect(turn.auditEvents).toEqual([
        "turn_start",
        "chat_agent_request",
        "chat_agent_response",
        ...required.slice(2),
      ]);
    } else {
      expectInOrder(turn.auditEvents, required);
      // The tool may end before or after the chat agent's round-1 response (early dispatch).
      expectInOrder(turn.auditEvents, [
        "chat_agent_request",
        "chat_agent_response",
        "chat_agent_request",
        "chat_agent_response",
      ]);
      expect(turn.auditEvents.at(0)).toBe("turn_start");
      expect(turn.auditEvents.at(-1)).toBe("turn_end");
    }
    expect(turn.audit.filter((entry) => entry.event === "chat_agent_request")).toEqual([
      { event: "chat_agent_request", turn_index: 1, round_index: 1 },
      { event: "chat_agent_request", turn_index: 1, round_index: 2 },
    ]);

    const rollup = lab.store.usageRollups("s").turns[0];
    expect(end?.usage).toEqual(rollup);
    expect(rollup).toMatchObject({ call_count: 3, tool_count: 1, fallback_count: 0 });
    expect(rollup?.turn_wall_time_ms).toBe(end?.wall_time_ms);
    return id;
  }

  it("1. one tool (sim): stored group, three calls with their keys, audit in order", async () => {
    const { events, end } = await simTurn(SEARCH);
    const id = expectOneToolTurn(end, "mock_search");
    expect(JSON.parse(storedTurn(lab.store, "s").messages[2]?.content ?? "")).toMatchObject({
      query: "sqlite wal mode",
    });
    expect(eventsOfType(events, "tool_call").map((event) => event.event.id)).toEqual([id]);
    expect(eventsOfType(events, "tool_result")).toMatchObject([{ event_id: id, ok: true }]);
    expect(end?.answer).toContain("mock_search found 3 results");
    expect(events.at(-1)?.type).toBe("turn_end");
  });

  it("1. one tool (fake endpoint): the reply goes back to the model in round 2", async () => {
    lab.server.enqueue(
      toolRound(
        mode,
        [{ id: "call_a", name: "mock_search", arguments: '{"query":"sqlite wal"}' }],
        "Let me look.",
      ),
      answerRound("WAL lets readers run while one writer writes."),
    );
    const { end } = await fakeTurn(SEARCH);
    const id = expectOneToolTurn(end, "mock_search");
    expect(id).toBe(idOf("call_a"));
    const turn = storedTurn(lab.store, "s");
    expect(turn.messages[1]?.content.trim()).toBe("Let me look.");
    expect(turn.messages[1]?.tool_calls[0]?.raw_arguments).toBe('{"query":"sqlite wal"}');
    expect(end?.answer).toBe("WAL lets readers run while one writer writes.");
    // Usage as the endpoint reported it.
    expect(turn.calls[turn.calls.length - 1]).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 5,
    });

    const second = requestMessages(lab.server, 1);
    if (mode === "chat_agent_tools") {
      expect(second.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_a" });
      expect(second.at(-2)?.tool_calls?.map((call) => call.id)).toEqual(["call_a"]);
    } else {
      expect(second.at(-1)?.role).toBe("user");
      expect(second.at(-1)?.content).toContain(`<event_result id="${id}" name="mock_search">`);
      expect(second.at(-2)?.content).toContain('<event name="mock_search">');
    }
  });

  it("2. two tools in one message run in parallel; both replies follow in one group", async () => {
    const tools = createBuiltinTools({ latency_ms: 250 });
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: `${SEARCH} and file a ticket about the login page`,
      config: { tool_invocation_mode: mode },
      models: { chat: sim() },
      tools,
      approve: policyApprover("all"),
    });
    expect(end?.status).toBe("completed");
    const turn = storedTurn(lab.store, "s");
    const calls = turn.messages[1]?.tool_calls ?? [];
    expect(calls.map((call) => call.name)).toEqual(["mock_search", "mock_ticket"]);
    expect(turn.messages.map(messageShape)).toEqual([
      { role: "user", tool_call_id: null, tool_calls: [] },
      {
        role: "assistant",
        tool_call_id: null,
        tool_calls: calls.map((call) => `${call.name}:${call.id}`),
      },
      { role: "tool", tool_call_id: calls[0]?.id ?? "", tool_calls: [] },
      { role: "tool", tool_call_id: calls[1]?.id ?? "", tool_calls: [] },
      { role: "assistant", tool_call_id: null, tool_calls: [] },
    ]);
    // One group, one transaction: the assistant message and its replies share a timestamp.
    const group = turn.messages.slice(1, 4).map((message) => message.created_at);
    expect(new Set(group).size).toBe(1);
    expect(JSON.parse(turn.messages[3]?.content ?? "")).toMatchObject({
      title: "the login page",
      status: "open",
    });
    // Both started before either finished: they ran at the same time.
    const toolAudit = turn.auditEvents.filter((event) => event.startsWith("tool_"));
    expect(toolAudit).toEqual(["tool_start", "tool_start", "tool_end", "tool_end"]);
    expect(turn.calls.filter((row) => row.call_kind === "tool_execution")).toHaveLength(2);
    expect(end?.usage).toMatchObject({ tool_count: 2, call_count: 4, fallback_count: 0 });
  });

  it("2. two calls sharing one id (an endpoint fault): both run, each keeps its own reply", async () => {
    lab.server.enqueue(
      toolRound(mode, [
        { id: "call_0", name: "mock_search", arguments: '{"query":"wal"}' },
        { id: "call_0", name: "mock_ticket", arguments: '{"title":"WAL docs"}' },
      ]),
      answerRound("Both done."),
    );
    const { end } = await fakeTurn("search for wal and file a ticket about WAL docs");
    expect(end?.status).toBe("completed");
    const turn = storedTurn(lab.store, "s");
    const ids = turn.messages[1]?.tool_calls.map((call) => call.id) ?? [];
    expect(ids).toEqual(
      mode === "dual_agent" ? ["evt_1_1_1", "evt_1_1_2"] : ["call_0", "call_0_2"],
    );
    expect(turn.messages.slice(2, 4).map((message) => message.tool_call_id)).toEqual(ids);
    expect(JSON.parse(turn.messages[2]?.content ?? "")).toMatchObject({ query: "wal" });
    expect(JSON.parse(turn.messages[3]?.content ?? "")).toMatchObject({ title: "WAL docs" });
    expect(end?.usage).toMatchObject({ tool_count: 2, call_count: 4 });
  });

  it("3. no tool needed: one chat call, no tool rows", async () => {
    const { events, end } = await simTurn("hello");
    expect(end).toMatchObject({ status: "completed", turn_index: 1 });
    expect(end?.answer).toMatch(/^Hello!/);
    const turn = storedTurn(lab.store, "s");
    expect(turn.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "hello"],
      ["assistant", end?.answer],
    ]);
    expect(turn.calls.map(callSummary)).toEqual(["chat:1:1 chat_agent chat_completion"]);
    expect(turn.auditEvents).toEqual([
      "turn_start",
      "chat_agent_request",
      "chat_agent_response",
      "turn_end",
    ]);
    expect(eventsOfType(events, "round_end")).toEqual([
      { type: "round_end", round_index: 1, finish_reason: "stop", tool_calls: 0 },
    ]);
    expect(end?.usage).toMatchObject({ call_count: 1, tool_count: 0 });
  });

  /** dual_agent: the event agent repaired the arguments; both calls say so, the tool ran repaired. */
  function expectRepairedByEventAgent(end: TurnEndEvent | undefined): void {
    expect(end?.status).toBe("completed");
    const turn = storedTurn(lab.store, "s");
    expect(turn.calls.map(callSummary).sort()).toEqual([
      "chat:1:1 chat_agent chat_completion",
      "chat:1:2 chat_agent chat_completion",
      "fallback:1:1:evt_1_1_1 event_agent argument_fallback fallback",
      "tool:1:1:evt_1_1_1 event_kernel tool_execution fallback",
    ]);
    expect(turn.calls.find((row) => row.call_kind === "argument_fallback")).toMatchObject({
      event_id: "evt_1_1_1",
      event_name: "mock_search",
      round_index: 1,
    });
    // The tool ran with the repaired arguments, and the history keeps what ran.
    expect(turn.messages[1]?.tool_calls[0]).toMatchObject({
      arguments: { query: "sqlite wal mode" },
      raw_arguments: '{"query":"sqlite wal mode"}',
    });
    expect(JSON.parse(turn.messages[2]?.content ?? "")).toMatchObject({ query: "sqlite wal mode" });
    expectInOrder(turn.auditEvents, [
      "event_detected",
      "fallback_start",
      "event_agent_request",
      "event_agent_response",
      "fallback_end",
      "tool_start",
      "tool_end",
    ]);
    expect(end?.usage).toMatchObject({ fallback_count: 1, tool_count: 1, call_count: 4 });
  }

  /** chat_agent_tools: no fallback; the error reply goes back to the model in round 2. */
  function expectErrorRoundTrip(
    end: TurnEndEvent | undefined,
    roundTwo: readonly { role: string; content: string }[],
  ): string {
    expect(end?.status).toBe("completed");
    const turn = storedTurn(lab.store, "s");
    const reply = turn.messages[2];
    expect(reply?.role).toBe("tool");
    const id = turn.messages[1]?.tool_calls[0]?.id;
    expect(turn.calls.map(callSummary)).toEqual([
      "chat:1:1 chat_agent chat_completion",
      `tool:1:1:${id} event_kernel tool_execution`,
      "chat:1:2 chat_agent chat_completion",
    ]);
    expect(turn.auditEvents).not.toContain("fallback_start");
    expect(roundTwo.at(-1)).toMatchObject({ role: "tool", content: reply?.content });
    expect(end?.usage).toMatchObject({ fallback_count: 0, tool_count: 1, call_count: 3 });
    return (JSON.parse(reply?.content ?? "{}") as { error?: string }).error ?? "";
  }

  it("4. bad arguments (sim writes them): repaired by the event agent / sent back as an error", async () => {
    const chat = sim({ malformed_arguments_rate: 1 });
    const { events, end } = await simTurn(SEARCH, chat);
    if (mode === "dual_agent") {
      expectRepairedByEventAgent(end);
      expect(eventsOfType(events, "tool_call")[0]?.event.raw_arguments).not.toBe(
        '{"query":"sqlite wal mode"}',
      );
    } else {
      const error = expectErrorRoundTrip(end, chat.requests[1]?.messages ?? []);
      // The sim's malformation is either a renamed field or cut-off JSON.
      expect(error).toMatch(/query: is required|not valid JSON/);
      expect(end?.answer).toMatch(/failed/);
    }
  });

  it('4. bad arguments (endpoint writes {"q":…}): repaired / an error naming the field', async () => {
    lab.server.enqueue(
      toolRound(mode, [{ id: "call_q", name: "mock_search", arguments: '{"q":"sqlite wal"}' }]),
      answerRound("Here you go."),
    );
    const { events, end } = await fakeTurn(SEARCH);
    if (mode === "dual_agent") {
      expectRepairedByEventAgent(end);
      expect(eventsOfType(events, "fallback_start")[0]?.reason).toContain("query: is required");
      expect(eventsOfType(events, "tool_result")).toMatchObject([
        { ok: true, used_fallback: true },
      ]);
      // The chat agent is shown what ran, not what it first wrote.
      expect(requestMessages(lab.server, 1).at(-1)?.content).toContain(
        '<event_result id="evt_1_1_1" name="mock_search">{"query":"sqlite wal mode"',
      );
    } else {
      const error = expectErrorRoundTrip(end, requestMessages(lab.server, 1));
      expect(error).toBe("q: is not allowed (allowed: query, limit); query: is required");
      expect(requestMessages(lab.server, 1).at(-1)).toMatchObject({ tool_call_id: "call_q" });
    }
  });

  it("5. unknown tool: an error reply, and the turn goes on to complete", async () => {
    lab.server.enqueue(
      toolRound(mode, [{ id: "call_u", name: "does_not_exist", arguments: "{}" }]),
      answerRound("That tool does not exist; here is what I know."),
    );
    const { events, end } = await fakeTurn(SEARCH);
    expect(end?.status).toBe("completed");
    const id = idOf("call_u");
    const turn = storedTurn(lab.store, "s");
    expect(turn.messages.map(messageShape)[2]).toEqual({
      role: "tool",
      tool_call_id: id,
      tool_calls: [],
    });
    expect(JSON.parse(turn.messages[2]?.content ?? "")).toEqual({
      error: "unknown tool does_not_exist; available: mock_search, mock_ticket",
    });
    expect(turn.calls.map(callSummary).sort()).toEqual([
      "chat:1:1 chat_agent chat_completion",
      "chat:1:2 chat_agent chat_completion",
      `tool:1:1:${id} event_kernel tool_execution`,
    ]);
    expect(eventsOfType(events, "fallback_start")).toEqual([]);
    const toolEnd = lab.store.listAuditLogs("s").find((entry) => entry.event === "tool_end");
    expect(toolEnd?.details).toMatchObject({ ok: false, error_kind: "unknown_tool" });
    expect(end?.answer).toBe("That tool does not exist; here is what I know.");
  });

  it("a turn moves the session's updated_at at its claim and at its end, not at each round", async () => {
    const seen: { updated_at: string | undefined; roles: string[] }[] = [];
    const inner = sim();
    // Each chat call first notes what the store holds, then waits a few ms: a round written
    // with its own timestamp would show as a later updated_at at the next call.
    const chat: ChatModel = {
      provider: inner.provider,
      model: inner.model,
      simulated: inner.simulated,
      async *stream(request, options) {
        seen.push({
          updated_at: lab.store.getSession("s")?.updated_at,
          roles: lab.store.listMessages("s").map((message) => message.role),
        });
        await new Promise((resolve) => setTimeout(resolve, 5));
        yield* inner.stream(request, options);
      },
    };
    const end = await completedTurn({
      store: lab.store,
      session_id: "s",
      message: SEARCH,
      config: { tool_invocation_mode: mode },
      models: { chat },
    });
    expect(end.status).toBe("completed");
    const [first, second] = seen;
    expect(seen).toHaveLength(2);
    // Round 1 is stored before round 2 is asked for, and the claim's updated_at still stands.
    expect(first?.roles).toEqual(["user"]);
    expect(second?.roles.slice(0, 3)).toEqual(["user", "assistant", "tool"]);
    expect(second?.updated_at).toBe(first?.updated_at);
    const after = lab.store.getSession("s")?.updated_at ?? "";
    expect(after > (first?.updated_at ?? after)).toBe(true);
    expect(after).toBe(lab.store.listTurns("s")[0]?.completed_at);
  });

  it("a session's next turn is sent the whole stored history", async () => {
    await completedTurn({
      store: lab.store,
      session_id: "s",
      message: SEARCH,
      config: { tool_invocation_mode: mode },
      models: { chat: sim() },
    });
    const chat = sim();
    const end = await completedTurn({
      store: lab.store,
      session_id: "s",
      message: "hello",
      models: { chat },
    });
    expect(end.turn_index).toBe(2);
    const sent = chat.requests[0]?.messages ?? [];
    // system + the four messages of turn 1 (rendered for the mode) + the new user message.
    expect(sent[0]?.role).toBe("system");
    expect(sent.at(-1)).toMatchObject({ role: "user", content: "hello" });
    expect(sent).toHaveLength(6);
    expect(lab.store.listTurns("s").map((turn) => [turn.turn_index, turn.status])).toEqual([
      [1, "completed"],
      [2, "completed"],
    ]);
  });
});
