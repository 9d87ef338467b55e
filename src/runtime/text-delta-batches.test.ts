import { describe, expect, it } from "vitest";
import { collectTurn, eventsOfType, useSessionStore } from "../../test/runtime/turn-harness.js";
import { tokenUsage } from "../domain/usage.js";
import type { ChatModel, ChatModelPart } from "../providers/chat-model.js";
import { PartStream } from "../providers/part-stream.js";

/**
 * A model's text reaches the turn's watchers one body read at a time: the text deltas of one read
 * are one `text_delta` (a 1,000-chunk answer is a few events, not 1,000), in their place among the
 * other events, and the answer recorded is the whole text either way.
 */

const FINISH: ChatModelPart = {
  type: "finish",
  finish_reason: "stop",
  ttft_ms: 1,
  elapsed_ms: 2,
  attempts: 1,
  response_model: "batched",
  response_id: null,
  system_fingerprint: null,
};

/** A model whose stream is read as these batches, as the OpenAI adapter's reads are. */
function batchedModel(batches: readonly (readonly ChatModelPart[])[]): ChatModel {
  return {
    provider: "openai",
    model: "batched",
    simulated: false,
    stream: () =>
      new PartStream(
        (async function* () {
          for (const batch of batches) yield batch;
        })(),
      ),
  };
}

const text = (value: string): ChatModelPart => ({ type: "text-delta", text: value });

describe("text deltas reach the watchers a read at a time", () => {
  const session = useSessionStore("chat_agent_tools");

  it("joins a read's text, keeps it in order with reasoning, and records the whole answer", async () => {
    const model = batchedModel([
      [text("Hel"), text("lo"), { type: "reasoning-delta", text: "hm" }, text(" the")],
      [
        text("re"),
        text("!"),
        {
          type: "usage",
          usage: tokenUsage(),
          estimated: false,
          source: "endpoint",
          cost_usd: null,
          raw: null,
        },
        FINISH,
      ],
    ]);
    const { events, end } = await collectTurn({
      store: session().store,
      session_id: "s",
      message: "hi",
      models: { chat: model, event: model },
    });
    expect(end?.status).toBe("completed");
    const watched = events
      .filter((event) => event.type === "text_delta" || event.type === "reasoning_delta")
      .map((event) => [event.type, (event as { text: string }).text]);
    expect(watched).toStrictEqual([
      ["text_delta", "Hello"],
      ["reasoning_delta", "hm"],
      ["text_delta", " the"],
      ["text_delta", "re!"],
    ]);
    expect(eventsOfType(events, "turn_end")[0]?.answer).toBe("Hello there!");
    const stored = session().store.listMessages("s").at(-1);
    expect(stored).toMatchObject({ role: "assistant", content: "Hello there!" });
  });

  it("a model read part by part (no batches) gives a delta per part", async () => {
    const parts = [text("a"), text("b"), FINISH];
    const model: ChatModel = {
      provider: "openai",
      model: "plain",
      simulated: false,
      stream: () =>
        (async function* () {
          yield* parts;
        })(),
    };
    const { events } = await collectTurn({
      store: session().store,
      session_id: "s",
      message: "hi",
      models: { chat: model, event: model },
    });
    expect(eventsOfType(events, "text_delta").map((event) => event.text)).toStrictEqual(["a", "b"]);
  });
});
