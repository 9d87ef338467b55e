import { describe, expect, it } from "vitest";
import { completionStream, errorReply, streamReply } from "../../test/fake-openai-server.js";
import {
  answerRound,
  fakeServerConfig,
  fakeServerModel,
} from "../../test/runtime/scripted-turns.js";
import {
  collectTurn,
  eventsOfType,
  MODES,
  RecordingModel,
  useServerLab,
} from "../../test/runtime/turn-harness.js";
import { estimateCost, priceFor } from "../domain/prices.js";
import type { LabSessionConfigInput } from "../domain/session-config.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { tokenUsage, type UsageCallRecord } from "../domain/usage.js";
import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../providers/chat-model.js";
import { createChatModel } from "../providers/create-chat-model.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { countTokens } from "../providers/tokenizer.js";

/**
 * What a turn records of each model call beyond its token counts: the reasoning and refusal kept
 * apart from the answer (events, the assistant message, the usage row), the cost, the served
 * model, and the call's captured request and response under the usage row's metric key.
 */

const SEARCH = "search for sqlite wal mode";

/** A model that says whether the runtime asked it to capture each call. */
class CaptureProbe extends RecordingModel {
  readonly asked: boolean[] = [];
  /** `endpoint`: the probe passes for a real model whose calls go there. */
  constructor(
    inner: ChatModel,
    private readonly endpoint?: string,
  ) {
    super(inner);
  }
  override get simulated(): boolean {
    return this.endpoint === undefined && super.simulated;
  }
  override get baseUrl(): string | undefined {
    return this.endpoint ?? super.baseUrl;
  }
  override stream(request: ChatModelRequest, options?: StreamOptions) {
    this.asked.push(options?.capture !== undefined);
    return super.stream(request, options);
  }
}

/** An endpoint that refuses, as OpenAI's `delta.refusal` does, in two pieces. */
class RefusingModel implements ChatModel {
  readonly provider = "test";
  readonly model = "refuser";
  readonly simulated = false;
  async *stream(): AsyncGenerator<ChatModelPart> {
    yield { type: "response-start", attempt: 1, status: 200, request_id: null, at_ms: 1 };
    yield { type: "first-token", ttft_ms: 2 };
    yield { type: "refusal-delta", text: "I can't help " };
    yield { type: "refusal-delta", text: "with that." };
    yield {
      type: "usage",
      usage: tokenUsage({ prompt_tokens: 20, completion_tokens: 6 }),
      estimated: false,
      source: "endpoint",
      cost_usd: 0.0001,
      raw: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26, cost: 0.0001 },
    };
    yield {
      type: "finish",
      finish_reason: "stop",
      ttft_ms: 2,
      elapsed_ms: 3,
      attempts: 1,
      response_model: "refuser-2025-01-01",
      response_id: "chatcmpl-1",
      system_fingerprint: "fp_1",
    };
  }
}

const joined = (events: { round_index: number; text: string }[], round: number) =>
  events
    .filter((event) => event.round_index === round)
    .map((event) => event.text)
    .join("");

/** The answer text carried by a captured SSE stream's chunks. */
function streamedContent(sse: string): string {
  return sse
    .split("\n\n")
    .filter((event) => event.startsWith("data: {"))
    .flatMap((event) => JSON.parse(event.slice(6)).choices)
    .map((choice: { delta: { content?: string } }) => choice.delta.content ?? "")
    .join("");
}

const modelCalls = (calls: UsageCallRecord[]) =>
  calls.filter((call) => call.call_kind !== "tool_execution");

describe.each(MODES)("what a turn records of each call, %s", (mode) => {
  const lab = useServerLab();
  const turn = (
    message: string,
    config: Omit<LabSessionConfigInput, "tool_invocation_mode"> = {},
    models: { chat?: ChatModel; event?: ChatModel } = {},
    onEvent?: (event: TurnEvent) => "stop" | undefined,
    signal?: AbortSignal,
  ) =>
    collectTurn(
      {
        store: lab.store,
        session_id: "s",
        message,
        config: { tool_invocation_mode: mode, ...config },
        models,
        ...(signal ? { signal } : {}),
      },
      onEvent,
    );
  const thinkingSim = { chat_agent: { model: "sim", options: { reasoning: true } } };

  it("reasoning streams as reasoning_delta and lands on the assistant message, never in the answer", async () => {
    const { events, end } = await turn(SEARCH, thinkingSim);
    expect(end?.status).toBe("completed");
    const reasoning = eventsOfType(events, "reasoning_delta");
    expect(joined(reasoning, 1)).toBe(
      "The request needs mock_search. I will call it first, then answer from the results.",
    );
    expect(joined(reasoning, 2)).toBe("I have what I need to answer directly, without a tool.");
    const answer = eventsOfType(events, "text_delta")
      .map((event) => event.text)
      .join("");
    for (const shown of [answer, end?.answer ?? ""])
      expect(shown).not.toMatch(/I will call|I have what/);

    const assistants = lab.store
      .listMessages("s")
      .filter((message) => message.role === "assistant");
    expect(assistants.map((message) => message.reasoning)).toEqual([
      joined(reasoning, 1),
      joined(reasoning, 2),
    ]);
    expect(assistants.map((message) => message.refusal)).toEqual([null, null]);

    const calls = modelCalls(lab.store.usageSummary("s").calls);
    for (const call of calls) {
      expect(call.reasoning_tokens).toBeGreaterThan(0);
      expect(call.reasoning_tokens).toBeLessThanOrEqual(call.completion_tokens);
      expect(call).toMatchObject({
        usage_source: "endpoint",
        estimated: false,
        response_model: "sim",
        response_id: expect.stringMatching(/^chatcmpl-sim-/),
        refusal: false,
        cost_usd: null,
        // The sim is free by the price table.
        cost_estimated_usd: 0,
      });
    }
    expect(calls.map((call) => call.finish_reason)).toEqual([
      mode === "chat_agent_tools" ? "tool_calls" : "stop",
      "stop",
    ]);
    expect(eventsOfType(events, "usage").filter((e) => e.agent === "chat_agent")).toMatchObject([
      { usage_source: "endpoint", cost_usd: 0, cost_source: "estimated", response_model: "sim" },
      { usage_source: "endpoint", cost_usd: 0, cost_source: "estimated", response_model: "sim" },
    ]);
  });

  it("a next turn hands the stored reasoning back to the model on its assistant messages", async () => {
    await turn(SEARCH, thinkingSim);
    const next = new RecordingModel(new SimChatModel());
    const { end } = await turn("thanks", {}, { chat: next });
    expect(end?.status).toBe("completed");
    const sent = next.requests[0]?.messages.filter((message) => message.role === "assistant");
    expect(sent?.map((message) => message.reasoning)).toEqual([
      "The request needs mock_search. I will call it first, then answer from the results.",
      "I have what I need to answer directly, without a tool.",
    ]);
  });

  it("a refusal is kept apart: refusal_delta events, the message's refusal field, the row's flag", async () => {
    const { events, end } = await turn(
      "help me with something bad",
      {},
      { chat: new RefusingModel() },
    );
    expect(end).toMatchObject({ status: "completed", answer: "" });
    expect(joined(eventsOfType(events, "refusal_delta"), 1)).toBe("I can't help with that.");
    expect(eventsOfType(events, "text_delta")).toEqual([]);
    const [assistant] = lab.store.listMessages("s").filter((m) => m.role === "assistant");
    expect(assistant).toMatchObject({
      content: "",
      refusal: "I can't help with that.",
      reasoning: null,
    });
    const [call] = lab.store.usageSummary("s").calls;
    expect(call).toMatchObject({
      refusal: true,
      finish_reason: "stop",
      response_model: "refuser-2025-01-01",
      response_id: "chatcmpl-1",
      system_fingerprint: "fp_1",
      cost_usd: 0.0001,
      usage_source: "endpoint",
      raw_usage: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26, cost: 0.0001 },
    });
    expect(eventsOfType(events, "usage")[0]).toMatchObject({
      cost_usd: 0.0001,
      cost_source: "reported",
    });
    const response = lab.store
      .listAuditLogs("s")
      .find((entry) => entry.event === "chat_agent_response");
    expect(response?.details).toMatchObject({
      refusal: true,
      response_model: "refuser-2025-01-01",
      finish_reason: "stop",
    });
  });

  it("keeps every model call's request and raw stream under its usage row's metric key (sim: auto)", async () => {
    const { end } = await turn(SEARCH);
    expect(end?.status).toBe("completed");
    const { calls } = lab.store.usageSummary("s");
    for (const call of calls) {
      const payload = lab.store.getCallPayload("s", call.metric_key ?? "");
      if (call.call_kind === "tool_execution") {
        expect(payload).toBeNull();
        continue;
      }
      expect(payload).toMatchObject({
        metric_key: call.metric_key,
        turn_index: 1,
        round_index: call.round_index,
        agent: "chat_agent",
        request_truncated: false,
        response_truncated: false,
      });
      const body = JSON.parse(payload?.request_body ?? "");
      expect(body).toMatchObject({ model: "sim", stream: true });
      expect(body.messages[0].role).toBe("system");
      // Exactly what the model was sent: round 2 ends with the tool results.
      const last = body.messages.at(-1);
      if (call.round_index === 1) expect(last).toEqual({ role: "user", content: SEARCH });
      else expect(last.content).toContain('"query":"sqlite wal mode"');
      expect(payload?.request_bytes).toBe(Buffer.byteLength(payload?.request_body ?? ""));
      expect(payload?.response_body.endsWith("data: [DONE]\n\n")).toBe(true);
    }
    // The raw stream of dual_agent's first round carries the event tag the chat agent wrote.
    const first = lab.store.getCallPayload("s", "chat:1:1");
    const content = streamedContent(first?.response_body ?? "");
    if (mode === "dual_agent") expect(content).toContain('<event name="mock_search">');
    else expect(first?.response_body).toContain('"tool_calls"');
  });

  it("cuts each body at capture.max_bytes, on a character boundary, counting the full size", async () => {
    const message = `search for ${"数据库 ".repeat(400)}`;
    const { end } = await turn(message, { capture: { max_bytes: 1024 } });
    expect(end?.status).toBe("completed");
    const payloads = modelCalls(lab.store.usageSummary("s").calls).map((call) =>
      lab.store.getCallPayload("s", call.metric_key ?? ""),
    );
    expect(payloads.length).toBeGreaterThan(0);
    for (const payload of payloads) {
      if (payload === null) throw new Error("a model call has no payload");
      for (const [body, bytes, truncated] of [
        [payload.request_body, payload.request_bytes, payload.request_truncated],
        [payload.response_body, payload.response_bytes, payload.response_truncated],
      ] as const) {
        expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024);
        expect(Buffer.byteLength(body)).toBeGreaterThan(1024 - 4);
        expect(body).not.toContain("\uFFFD");
        expect(truncated).toBe(true);
        expect(bytes).toBeGreaterThan(1024);
      }
    }
  });

  it("payloads: off keeps none, and the model is never handed a capture", async () => {
    const probe = new CaptureProbe(new SimChatModel());
    const { end } = await turn(SEARCH, { capture: { payloads: "off" } }, { chat: probe });
    expect(end?.status).toBe("completed");
    expect(probe.asked).toEqual([false, false]);
    expect(lab.store.getCallPayload("s", "chat:1:1")).toBeNull();
    // The usage rows are recorded as ever.
    expect(modelCalls(lab.store.usageSummary("s").calls)).toHaveLength(2);
  });

  it("a hosted endpoint's calls are not captured by default, and are priced by the configured model", async () => {
    const remote = { model: "openai:gpt-4.1-mini", base_url: "https://api.example.com/v1" };
    const probe = new CaptureProbe(new SimChatModel(), remote.base_url);
    const { end } = await turn(
      SEARCH,
      { chat_agent: remote, event_agent: { model: "sim" } },
      { chat: probe },
    );
    expect(end?.status).toBe("completed");
    expect(probe.asked).toEqual([false, false]);
    expect(lab.store.getCallPayload("s", "chat:1:1")).toBeNull();
    const price = priceFor("openai:gpt-4.1-mini", {});
    for (const call of modelCalls(lab.store.usageSummary("s").calls)) {
      expect(call.cost_estimated_usd).toBeGreaterThan(0);
      expect(call.cost_estimated_usd).toBeCloseTo(estimateCost(call, price) ?? -1, 12);
    }
  });

  it("payloads: on captures a hosted endpoint too; a loopback endpoint is captured by default", async () => {
    const remote = { model: "openai:gpt-4.1-mini", base_url: "https://api.example.com/v1" };
    const probe = new CaptureProbe(new SimChatModel(), remote.base_url);
    await turn(
      SEARCH,
      { chat_agent: remote, event_agent: { model: "sim" }, capture: { payloads: "on" } },
      { chat: probe },
    );
    expect(probe.asked).toEqual([true, true]);
    expect(lab.store.getCallPayload("s", "chat:1:1")).not.toBeNull();

    const loopback = new CaptureProbe(fakeServerModel(lab.server));
    lab.server.enqueue(errorReply(400, "refused"));
    await collectTurn({
      store: lab.store,
      session_id: "local",
      message: "hello",
      config: fakeServerConfig(mode, lab.server),
      models: { chat: loopback },
    });
    expect(loopback.asked).toEqual([true]);
  });

  it("a loopback endpoint's call keeps exactly the body the server received and the stream it sent", async () => {
    lab.server.enqueue(answerRound("The WAL lets readers work beside a writer."));
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "local",
      message: "explain wal",
      config: fakeServerConfig(mode, lab.server, { tools: [] }),
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(end?.status).toBe("completed");
    const payload = lab.store.getCallPayload("local", "chat:1:1");
    expect(payload?.request_body).toBe(lab.server.requests[0]?.rawBody);
    expect(streamedContent(payload?.response_body ?? "")).toBe(
      "The WAL lets readers work beside a writer.",
    );
    expect(payload?.response_body).toContain("data: [DONE]");
    expect(payload?.request_body).not.toMatch(/authorization|bearer/i);
  });

  it("a key the endpoint echoes never reaches the stored payload, whoever reads it later", async () => {
    const key = "sk-local-test-key-0123456789abcdef";
    // In one piece, as an endpoint echoes a request field: the payload is kept, redacted (split
    // between chunks, it is not kept at all: echoed-key.test.ts).
    lab.server.enqueue(streamReply(completionStream({ text: [`Your key is ${key}.`] })));
    const model = createChatModel(
      {
        model: "openai:fake-model",
        base_url: lab.server.baseUrl,
        api_key_env: "LAB_TEST_KEY",
        options: { max_retries: 0 },
      },
      { env: { LAB_TEST_KEY: key } },
    );
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "echo",
      message: "what is my key?",
      config: fakeServerConfig(mode, lab.server, { tools: [] }),
      models: { chat: model },
    });
    expect(end?.status).toBe("completed");
    expect(lab.server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    const payload = lab.store.getCallPayload("echo", "chat:1:1");
    expect(payload?.response_body).toContain("Your key is ");
    expect(payload?.response_body).not.toContain(key);
    expect(payload?.response_body).toContain("[redacted]");
  });

  it("a finish reason no schema expects is kept cut and clean, and the call is recorded", async () => {
    const odd = `custom_${"x".repeat(150)}\u0007`;
    lab.server.enqueue(streamReply(completionStream({ text: ["Fine."], finishReason: odd })));
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "odd",
      message: "hello",
      config: fakeServerConfig(mode, lab.server, { tools: [] }),
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(end?.status).toBe("completed");
    const [call] = lab.store.usageSummary("odd").calls;
    expect(call?.finish_reason).toBe(`custom_${"x".repeat(93)}`);
    expect(call).toMatchObject({
      usage_source: "endpoint",
      prompt_tokens: 10,
      completion_tokens: 5,
    });
  });

  it("payloads: off on a loopback endpoint keeps none", async () => {
    lab.server.enqueue(answerRound("Fine."));
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "local",
      message: "hello",
      config: fakeServerConfig(mode, lab.server, { capture: { payloads: "off" } }),
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(end?.status).toBe("completed");
    expect(lab.store.usageSummary("local").calls).toHaveLength(1);
    expect(lab.store.getCallPayload("local", "chat:1:1")).toBeNull();
  });

  it("a session's prices override the table: the cost follows the session's price", async () => {
    const prices = { sim: { input: 2, cached_input: 1, output: 8 } };
    const { events } = await turn(SEARCH, { prices });
    for (const call of modelCalls(lab.store.usageSummary("s").calls)) {
      expect(call.cost_estimated_usd).toBeCloseTo(estimateCost(call, prices.sim) ?? -1, 12);
      expect(call.cost_estimated_usd).toBeGreaterThan(0);
    }
    const [usage] = eventsOfType(events, "usage");
    expect(usage?.cost_usd).toBeGreaterThan(0);
  });

  it("a cancelled call: usage estimated and labelled, reasoning counted, cost estimated, payload as far as it came", async () => {
    const controller = new AbortController();
    const prices = { sim: { input: 2, output: 8 } };
    const slowThinker = {
      chat_agent: { model: "sim", options: { reasoning: true, tokens_per_second: 100 } },
      prices,
    };
    const { events, end } = await turn(
      "Tell me a long story about databases",
      slowThinker,
      {},
      (event) => {
        if (event.type === "text_delta") controller.abort(new Error("user cancelled"));
        return undefined;
      },
      controller.signal,
    );
    expect(end?.status).toBe("cancelled");
    const streamed = joined(eventsOfType(events, "reasoning_delta"), 1);
    expect(streamed.length).toBeGreaterThan(0);
    const [call] = lab.store.usageSummary("s").calls;
    expect(call).toMatchObject({
      metric_key: "chat:1:1",
      estimated: true,
      usage_source: "estimated",
      finish_reason: null,
      cost_usd: null,
    });
    expect(call?.reasoning_tokens).toBe(countTokens(streamed));
    expect(call?.completion_tokens).toBeGreaterThan(call?.reasoning_tokens ?? 0);
    expect(call?.cost_estimated_usd).toBeGreaterThan(0);
    expect(call?.cost_estimated_usd).toBeCloseTo(
      estimateCost(call as UsageCallRecord, prices.sim) ?? -1,
      12,
    );
    expect(eventsOfType(events, "usage")).toMatchObject([
      {
        metric_key: "chat:1:1",
        estimated: true,
        usage_source: "estimated",
        cost_source: "estimated",
      },
    ]);
    const payload = lab.store.getCallPayload("s", "chat:1:1");
    expect(JSON.parse(payload?.request_body ?? "").model).toBe("sim");
    expect(payload?.response_body).toContain("reasoning_content");
    expect(payload?.response_body).not.toContain("[DONE]");
    const [assistant] = lab.store.listMessages("s").filter((m) => m.role === "assistant");
    expect(assistant?.reasoning).toBe(streamed);
  });
});

describe("the event agent's refusal (dual_agent argument fallback)", () => {
  const lab = useServerLab();

  it("fails the repair with the refusal as the reason, flags the row, and streams no refusal_delta", async () => {
    const { events, end } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "search for sqlite wal mode",
      config: { tool_invocation_mode: "dual_agent" },
      models: {
        chat: new SimChatModel({ options: { malformed_arguments_rate: 1 } }),
        event: new RefusingModel(),
      },
    });
    expect(end?.status).toBe("completed");
    const [fallback] = eventsOfType(events, "fallback_end");
    expect(fallback).toMatchObject({
      ok: false,
      error: "the event agent refused: I can't help with that.",
    });
    expect(eventsOfType(events, "refusal_delta")).toEqual([]);
    const row = lab.store
      .usageSummary("s")
      .calls.find((call) => call.call_kind === "argument_fallback");
    expect(row).toMatchObject({
      agent: "event_agent",
      refusal: true,
      response_model: "refuser-2025-01-01",
    });
    expect(lab.store.listMessages("s").every((message) => message.refusal === null)).toBe(true);
  });
});

describe("the argument fallback's payload", () => {
  const lab = useServerLab();

  it("is kept under fallback:t:r:e like any call, with its structured-output request", async () => {
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "search for sqlite wal mode",
      config: {
        tool_invocation_mode: "dual_agent",
        chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
        event_agent: { model: "sim" },
      },
    });
    expect(end?.status).toBe("completed");
    const row = lab.store
      .usageSummary("s")
      .calls.find((call) => call.call_kind === "argument_fallback");
    expect(row?.metric_key).toMatch(/^fallback:1:1:/);
    const payload = lab.store.getCallPayload("s", row?.metric_key ?? "");
    expect(payload).toMatchObject({ agent: "event_agent", turn_index: 1, round_index: 1 });
    const body = JSON.parse(payload?.request_body ?? "null");
    expect(body.response_format).toMatchObject({ type: "json_schema" });
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "search for sqlite wal mode" });
    expect(payload?.response_body.endsWith("data: [DONE]\n\n")).toBe(true);
  });
});
