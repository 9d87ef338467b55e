import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  collectStream,
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../../test/fake-openai-server.js";
import { ChatMessage } from "../../domain/messages.js";
import type { ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { OpenAIChatModel } from "./openai-chat-model.js";
import { passThroughBody } from "./request-body.js";

/**
 * `StreamOptions.raw_body`: the gateway's pass-through sends the client's own request, changed in
 * `model`, `stream` and `stream_options.include_usage` only; the adapter works as for a rendered
 * body otherwise (retries, usage, capture).
 */

const KEY = "sk-test-KEY-pass-1e9d";

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await FakeOpenAIServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(): OpenAIChatModel {
  return new OpenAIChatModel(
    { model: "upstream-model", base_url: server.baseUrl, api_key_env: "TEST_OPENAI_KEY" },
    { env: { TEST_OPENAI_KEY: KEY } },
  );
}

/** What a client wrote: fields the lab does not model, in an order of its own. */
const clientBody = {
  messages: [
    { role: "developer", content: "Answer in JSON." },
    {
      role: "user",
      name: "ada",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
  ],
  model: "my-upstream",
  seed: 7,
  response_format: {
    type: "json_schema",
    json_schema: { name: "answer", schema: { type: "object" }, strict: true },
  },
  tools: [
    {
      type: "function",
      function: { name: "lookup", parameters: { type: "object" }, strict: true },
    },
  ],
  parallel_tool_calls: false,
  stream: false,
  stream_options: { include_obfuscation: false },
  metadata: { run: "r1" },
  temperature: 0.2,
};

/** The lab's own view of the same call (what the usage estimate counts). */
const request: ChatModelRequest = {
  messages: [
    ChatMessage.parse({ role: "system", content: "Answer in JSON." }),
    ChatMessage.parse({ role: "user", content: "What is in this picture?" }),
  ],
};

function textOf(parts: readonly ChatModelPart[]): string {
  return parts.map((part) => (part.type === "text-delta" ? part.text : "")).join("");
}

describe("passThroughBody", () => {
  it("keeps every field and its place, and sets only model, stream and include_usage", () => {
    const body = passThroughBody("upstream-model", clientBody);
    expect(Object.keys(body)).toEqual(Object.keys(clientBody));
    expect(body).toEqual({
      ...clientBody,
      model: "upstream-model",
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
    });
    // The client's object is not changed: the gateway still reads what it asked for.
    expect(clientBody.stream_options).toEqual({ include_obfuscation: false });
  });

  it("adds stream and stream_options when the client sent neither, or sent null", () => {
    expect(passThroughBody("m", { model: "x", messages: [], stream_options: null })).toEqual({
      model: "m",
      messages: [],
      stream_options: { include_usage: true },
      stream: true,
    });
    expect(passThroughBody("m", { messages: [] })).toEqual({
      messages: [],
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
    });
  });
});

describe("OpenAIChatModel with raw_body (pass-through)", () => {
  it("sends the client's body with only the three changes, and streams as usual", async () => {
    server.enqueue(streamReply(completionStream({ text: ["{}"] })));
    const requests: string[] = [];
    const { parts, error } = await collectStream(
      model().stream(request, {
        raw_body: clientBody,
        capture: { request: (text) => requests.push(text), response: () => {} },
      }),
    );
    expect(error).toBeNull();
    expect(textOf(parts)).toBe("{}");

    const [sent] = server.requests;
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toEqual({
      ...clientBody,
      model: "upstream-model",
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
    });
    // Unknown fields survive as written: the content-part array, `name`, response_format, seed.
    const body = sent?.body as typeof clientBody;
    expect(body.messages[1]).toEqual(clientBody.messages[1]);
    expect(body.response_format).toEqual(clientBody.response_format);
    expect(body.seed).toBe(7);
    expect(body.messages[0]?.role).toBe("developer");
    // Capture holds the body actually sent, byte for byte.
    expect(requests).toEqual([sent?.rawBody]);
  });

  it("records the endpoint's usage, and estimates from the request and the client's tools when none came", async () => {
    server.enqueue(
      streamReply(
        completionStream({ text: ["ok"], usage: { prompt_tokens: 30, completion_tokens: 1 } }),
      ),
      streamReply(completionStream({ text: ["ok"], usage: null })),
      streamReply(completionStream({ text: ["ok"], usage: null })),
    );
    const reported = await collectStream(model().stream(request, { raw_body: clientBody }));
    expect(reported.parts.find((part) => part.type === "usage")).toMatchObject({
      usage: { prompt_tokens: 30, completion_tokens: 1 },
      estimated: false,
    });

    const counted = await collectStream(model().stream(request, { raw_body: clientBody }));
    const withoutTools = await collectStream(
      model().stream(request, { raw_body: { ...clientBody, tools: undefined } }),
    );
    const usageOf = (parts: readonly ChatModelPart[]) =>
      parts.find(
        (part): part is Extract<ChatModelPart, { type: "usage" }> => part.type === "usage",
      );
    expect(usageOf(counted.parts)?.estimated).toBe(true);
    // The client's tool list is part of the prompt the estimate counts.
    expect(usageOf(counted.parts)?.usage.prompt_tokens).toBeGreaterThan(
      usageOf(withoutTools.parts)?.usage.prompt_tokens ?? Number.POSITIVE_INFINITY,
    );
  });

  it("retries the same body after a 429", async () => {
    server.enqueue(
      errorReply(429, "slow down", { "retry-after-ms": "1" }),
      streamReply(completionStream({ text: ["again"] })),
    );
    const { parts, error } = await collectStream(model().stream(request, { raw_body: clientBody }));
    expect(error).toBeNull();
    expect(parts.filter((part) => part.type === "retry")).toHaveLength(1);
    expect(textOf(parts)).toBe("again");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
  });
});
