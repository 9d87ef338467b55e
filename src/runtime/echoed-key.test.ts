import { describe, expect, it } from "vitest";
import { completionStream, streamReply } from "../../test/fake-openai-server.js";
import { fakeServerConfig } from "../../test/runtime/scripted-turns.js";
import { collectTurn, eventsOfType, MODES, useServerLab } from "../../test/runtime/turn-harness.js";
import { REDACTED } from "../domain/secrets.js";
import { createChatModel } from "../providers/create-chat-model.js";
import { WITHHELD_RESPONSE } from "./capture-sink.js";

/**
 * An endpoint that echoes the key the lab sent it (a debugging proxy, a misconfigured gateway):
 * the key is the lab's secret, and nothing the lab stores or shows may hold it, however the
 * answer's stream splits it.
 */
const KEY = "sk-lab-echoed-KEY-0123456789abcdef";

/** The fake server's model, sent KEY (read from the environment, as the lab reads any key). */
const keyedModel = (base_url: string) =>
  createChatModel(
    {
      model: "openai:fake-model",
      base_url,
      api_key_env: "LAB_ECHO_KEY",
      options: { max_retries: 0 },
    },
    { env: { LAB_ECHO_KEY: KEY } },
  );

describe.each(MODES)("a key the endpoint echoes, %s", (mode) => {
  const lab = useServerLab({ strict: true });

  it("is blanked in the answer, its events, the stored messages and the export", async () => {
    lab.server.enqueue(
      streamReply(
        completionStream({
          text: ["Your key is Bearer sk-lab-ec", "hoed-KEY-0123", "456789abcdef, and ", KEY, "."],
        }),
      ),
    );
    const chat = keyedModel(lab.server.baseUrl);
    const { events, end, error } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "what key did you get?",
      config: fakeServerConfig(mode, lab.server, { capture: { payloads: "on" } }),
      models: { chat },
    });
    expect(error).toBeNull();
    // It did reach the endpoint: the echo is the endpoint's, not the test's.
    expect(lab.server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    const answer = `Your key is Bearer ${REDACTED}, and ${REDACTED}.`;
    expect(end).toMatchObject({ status: "completed", answer });
    const streamed = eventsOfType(events, "text_delta")
      .map((event) => event.text)
      .join("");
    expect(streamed).toBe(answer);
    const stored = lab.store.listMessages("s").find((message) => message.role === "assistant");
    expect(stored?.content).toBe(answer);
    expect(JSON.stringify(lab.store.exportSession("s"))).not.toContain("0123456789abcdef");
    // The raw stream holds the key in pieces (`sk-lab-ec`, `hoed-KEY-0123`, …) that no
    // redaction of its text can find: the captured response is not kept, its sizes are.
    const payload = lab.store.getCallPayload("s", "chat:1:1");
    expect(payload?.response_body).toBe(WITHHELD_RESPONSE);
    expect(payload?.response_bytes).toBeGreaterThan(0);
    expect(payload?.request_body).toContain("what key did you get?");
  });

  it("keeps the captured response of an answer that held no key", async () => {
    lab.server.enqueue(streamReply(completionStream({ text: ["No key ", "here."] })));
    const chat = keyedModel(lab.server.baseUrl);
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "anything?",
      config: fakeServerConfig(mode, lab.server, { capture: { payloads: "on" } }),
      models: { chat },
    });
    expect(end?.answer).toBe("No key here.");
    expect(lab.store.getCallPayload("s", "chat:1:1")?.response_body).toContain("here.");
  });
});

describe("a key the endpoint writes into a tool call's arguments", () => {
  const lab = useServerLab({ strict: true });

  it("is blanked before the tool runs and before the call is stored", async () => {
    lab.server.enqueue(
      streamReply(
        completionStream({
          toolCalls: [
            {
              index: 0,
              id: "call_1",
              type: "function",
              function: { name: "mock_search", arguments: `{"query":"${KEY}"}` },
            },
          ],
        }),
      ),
    );
    lab.server.enqueue(streamReply(completionStream({ text: ["Searched."] })));
    const chat = keyedModel(lab.server.baseUrl);
    const { events, end } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "search for my key",
      config: fakeServerConfig("chat_agent_tools", lab.server),
      models: { chat },
    });
    expect(end?.status).toBe("completed");
    expect(eventsOfType(events, "tool_call")[0]?.event.arguments).toStrictEqual({
      query: REDACTED,
    });
    const stored = JSON.stringify(lab.store.listMessages("s"));
    expect(stored).toContain(REDACTED);
    expect(stored).not.toContain("0123456789abcdef");
    expect(JSON.stringify(lab.store.exportSession("s"))).not.toContain("0123456789abcdef");
  });
});

describe("a key's first character held back when the answer reaches the output limit", () => {
  const lab = useServerLab({ strict: true });

  it("the answer is cut once, its marker written once", async () => {
    // "s" may begin the key: held back from the delta that also crosses the limit.
    lab.server.enqueue(
      streamReply(completionStream({ text: ["abcdefghi", "xxxxxs", "more text"] })),
    );
    const chat = keyedModel(lab.server.baseUrl);
    const { end } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "say a lot",
      config: fakeServerConfig("chat_agent_tools", lab.server, {
        limits: { max_output_chars: 10 },
      }),
      models: { chat },
    });
    const stored = lab.store.listMessages("s").find((message) => message.role === "assistant");
    expect(stored?.content.startsWith("abcdefghix…[cut: model output over 10 characters")).toBe(
      true,
    );
    expect(stored?.content.split("[cut:")).toHaveLength(2);
    expect(end?.answer).toBe(stored?.content);
  });

  it("a key whose beginning is held at the cut never reaches the captured response", async () => {
    // The limit falls in the delta that begins the key; the rest of it is in the next event,
    // which the capture received (one read) but the scrubber never saw.
    lab.server.enqueue(
      streamReply(
        completionStream({ text: ["abcdefghi", "xxxxxsk-lab-ec", "hoed-KEY-0123456789abcdef"] }),
      ),
    );
    const chat = keyedModel(lab.server.baseUrl);
    await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "say a lot",
      config: fakeServerConfig("chat_agent_tools", lab.server, {
        limits: { max_output_chars: 10 },
        capture: { payloads: "on" },
      }),
      models: { chat },
    });
    const payload = lab.store.getCallPayload("s", "chat:1:1");
    expect(payload?.response_bytes).toBeGreaterThan(0);
    expect(payload?.response_body).not.toContain("hoed-KEY-0123456789abcdef");
    expect(payload?.response_body).toBe(WITHHELD_RESPONSE);
  });
});
