import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { completionStream, FakeOpenAIServer, streamReply } from "../../test/fake-openai-server.js";
import { InvalidInputError } from "../domain/errors.js";
import type { ChatModelPart } from "./chat-model.js";
import { createChatModel } from "./create-chat-model.js";

async function collect(parts: AsyncIterable<ChatModelPart>): Promise<ChatModelPart[]> {
  const collected: ChatModelPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

describe("createChatModel", () => {
  let server: FakeOpenAIServer;
  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it("makes the simulated model from sim and sim:NAME, labelled simulated", () => {
    const plain = createChatModel({ model: "sim" });
    const named = createChatModel({ model: "sim:fast", options: { first_token_ms: 5 } });
    expect([plain.provider, plain.model, plain.simulated]).toEqual(["sim", "sim", true]);
    expect([named.provider, named.model, named.simulated]).toEqual(["sim", "sim:fast", true]);
  });

  it("makes an OpenAI-compatible model that talks to the configured endpoint with the key from the named variable", async () => {
    server.enqueue(streamReply(completionStream({ text: ["hel", "lo"] })));
    const model = createChatModel(
      {
        model: "openai:local-model",
        base_url: server.baseUrl,
        api_key_env: "LAB_TEST_KEY",
        options: { max_retries: 0 },
      },
      { env: { LAB_TEST_KEY: "sk-test-123" } },
    );
    expect([model.provider, model.model, model.simulated]).toEqual([
      "openai",
      "local-model",
      false,
    ]);
    const parts = await collect(
      model.stream({ messages: [{ role: "user", content: "hi", tool_calls: [] }] }),
    );
    expect(
      parts
        .filter((part) => part.type === "text-delta")
        .map((part) => part.text)
        .join(""),
    ).toBe("hello");
    expect(server.requests[0]?.body).toMatchObject({ model: "local-model" });
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test-123");
  });

  it("refuses unknown model strings and misplaced settings, naming the problem", () => {
    expect(() => createChatModel({ model: "gpt-4o" })).toThrow(InvalidInputError);
    expect(() => createChatModel({ model: "gpt-4o" })).toThrow(
      '"gpt-4o" is not a model string; use sim, sim:NAME or openai:MODEL',
    );
    expect(() => createChatModel({ model: "openai:" })).toThrow("is not a model string");
    expect(() => createChatModel({ model: "sim", base_url: "http://127.0.0.1:1" })).toThrow(
      "takes no base_url",
    );
    expect(() => createChatModel({ model: "sim", options: { seed: 1.5 } })).toThrow("options.seed");
    expect(() => createChatModel({ model: "openai:m", options: { max_retries: -1 } })).toThrow(
      "max_retries",
    );
    // Any other variable would go to the base URL the config names, whoever wrote the config.
    const naming = (api_key_env: string) => () =>
      createChatModel(
        { model: "openai:m", base_url: "http://127.0.0.1:1/v1", api_key_env },
        { env: { PGPASSWORD: "pw", AGENT_LAB_TOKEN: "t" } },
      );
    expect(naming("PGPASSWORD")).toThrow(
      "api_key_env: must name the environment variable holding a key",
    );
    expect(naming("AGENT_LAB_TOKEN")).toThrow("never AGENT_LAB_TOKEN");
  });
});
