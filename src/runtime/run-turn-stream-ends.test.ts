import { describe, expect, it } from "vitest";
import {
  completionChunk,
  SSE_PING,
  sseEvent,
  streamReply,
  unterminatedFinish,
} from "../../test/fake-openai-server.js";
import { fakeServerConfig } from "../../test/runtime/scripted-turns.js";
import {
  collectTurn,
  eventsOfType,
  MODES,
  storedTurn,
  useServerLab,
} from "../../test/runtime/turn-harness.js";
import { createChatModel } from "../providers/create-chat-model.js";

/**
 * How a provider stream's ending reaches a whole turn: an endpoint that only pings fails the turn
 * with a clear error in bounded time, and a last event without its blank line completes it.
 */

describe.each(MODES)("runTurn and how a model stream ends, %s", (mode) => {
  const lab = useServerLab({ strict: true });

  const turn = (options: Record<string, number>) =>
    collectTurn({
      store: lab.store,
      session_id: "s",
      message: "hello",
      config: fakeServerConfig(mode, lab.server),
      models: {
        chat: createChatModel(
          {
            model: "openai:fake-model",
            base_url: lab.server.baseUrl,
            options: { max_retries: 0, ...options },
          },
          { env: {} },
        ),
      },
    });

  it("an endpoint that sends one chunk, then only `: ping` forever: failed, idle_timeout named", async () => {
    lab.server.enqueue(
      streamReply([sseEvent(completionChunk({ content: "Thinking" }))], {
        ending: "stall",
        keepAlive: { text: SSE_PING, everyMs: 20 },
      }),
    );
    const started = performance.now();
    const { events, end, error } = await turn({ idle_timeout_ms: 150 });
    expect(error).toBeNull();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(end?.status).toBe("failed");
    const [failure] = eventsOfType(events, "error");
    expect(failure?.code).toBe("provider_stream_error");
    expect(failure?.message).toContain("no progress for 150 ms");
    expect(storedTurn(lab.store, "s").status).toBe("failed");
  });

  it("a call past deadline_ms: failed, the deadline named", async () => {
    const steps = [];
    for (let index = 0; index < 50; index++) {
      steps.push(sseEvent(completionChunk({ content: "." })), { waitMs: 30 });
    }
    lab.server.enqueue(streamReply(steps));
    const { events, end } = await turn({ deadline_ms: 200 });
    expect(end?.status).toBe("failed");
    expect(eventsOfType(events, "error")[0]?.message).toContain("deadline of 200 ms");
  });

  it("a last event ended by a lone \\r: the turn completes with the whole answer", async () => {
    lab.server.enqueue(streamReply(unterminatedFinish("All of it.", "\r")));
    const { end, error } = await turn({});
    expect(error).toBeNull();
    expect(end).toMatchObject({ status: "completed", answer: "All of it." });
  });
});
