import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectStream, FakeOpenAIServer, streamReply } from "../../../test/fake-openai-server.js";
import {
  cutInto,
  listProviderFixtures,
  loadProviderFixture,
} from "../../../test/fixtures/provider-streams/index.js";
import { ChatMessage } from "../../domain/messages.js";
import type { CallCapture, ChatModelPart } from "../chat-model.js";
import { OpenAIChatModel } from "./openai-chat-model.js";

/**
 * Every provider shape in test/fixtures/provider-streams, replayed through the real adapter over
 * HTTP: what it yields must be what the provider reported, field by field.
 */

const KEY = "sk-shapes-KEY-1b2c3d";
const request = {
  messages: [ChatMessage.parse({ role: "user", content: "Answer briefly." })],
};

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await FakeOpenAIServer.start();
});
afterAll(async () => {
  await server.close();
});

function ofType<T extends ChatModelPart["type"]>(
  parts: readonly ChatModelPart[],
  type: T,
): Extract<ChatModelPart, { type: T }>[] {
  return parts.filter((part): part is Extract<ChatModelPart, { type: T }> => part.type === type);
}

const joined = (parts: readonly { text: string }[]) => parts.map((part) => part.text).join("");

/** Cuts the body at a few fixed offsets, so events (and tags inside them) arrive in pieces. */
function inPieces(text: string): Uint8Array[] {
  const bytes = Buffer.from(text, "utf8");
  return cutInto(
    bytes,
    [7, 61, 62, 140, 333, 480, 801].filter((cut) => cut < bytes.length),
  );
}

describe("provider stream shapes through the openai adapter", () => {
  const names = listProviderFixtures();

  it("has a fixture for every documented shape", () => {
    expect(names).toEqual(
      [
        "anthropic-gateway",
        "deepseek-reasoner",
        "groq",
        "llamacpp",
        "llamacpp-timings-only",
        "mistral-thinking",
        "ollama",
        "openai-gpt5",
        "openai-refusal",
        "openrouter",
        "qwen-think-tags",
        "xai-grok",
        "zai",
      ].sort(),
    );
  });

  it.each(names)("%s: every expected field", async (name) => {
    const { sse, expected } = loadProviderFixture(name);
    server.enqueue(streamReply(inPieces(sse)));
    const requests: string[] = [];
    const responses: Buffer[] = [];
    const capture: CallCapture = {
      request: (body) => requests.push(body),
      response: (chunk) => responses.push(Buffer.from(chunk)),
    };
    const model = new OpenAIChatModel(
      { model: expected.requested_model, base_url: server.baseUrl, api_key_env: "SHAPES_KEY" },
      { env: { SHAPES_KEY: KEY } },
    );
    const { parts, error } = await collectStream(model.stream(request, { capture }));
    expect(error).toBeNull();

    expect(joined(ofType(parts, "text-delta"))).toBe(expected.text);
    expect(joined(ofType(parts, "reasoning-delta"))).toBe(expected.reasoning);
    expect(joined(ofType(parts, "refusal-delta"))).toBe(expected.refusal);
    expect(
      ofType(parts, "tool-call").map(({ id, name, raw_arguments }) => ({
        id,
        name,
        raw_arguments,
      })),
    ).toEqual(expected.tool_calls);

    const [usage] = ofType(parts, "usage");
    expect(usage?.usage).toEqual(expected.usage);
    expect(usage?.source).toBe(expected.usage_source);
    expect(usage?.estimated).toBe(false);
    expect(usage?.cost_usd).toBe(expected.cost_usd);
    expect(Object.keys(usage?.raw ?? {}).sort()).toEqual(expected.raw_keys);
    // The lab's invariant, whatever the provider reported.
    const counts = usage?.usage;
    expect(counts && counts.prompt_tokens + counts.completion_tokens).toBe(counts?.total_tokens);
    expect(counts?.reasoning_tokens).toBeLessThanOrEqual(counts?.completion_tokens ?? 0);
    expect((counts?.cached_tokens ?? 0) + (counts?.cache_write_tokens ?? 0)).toBeLessThanOrEqual(
      counts?.prompt_tokens ?? 0,
    );

    const [finish] = ofType(parts, "finish");
    expect(finish).toMatchObject({
      finish_reason: expected.finish_reason,
      response_model: expected.response_model,
      response_id: expected.response_id,
      system_fingerprint: expected.system_fingerprint,
    });

    // Time to first token is the answer's (or the tool call's, or the refusal's), not the
    // thinking's: it comes right before the first such delta.
    const first = parts.findIndex((part) => part.type === "first-token");
    const answer = parts.findIndex((part) =>
      ["text-delta", "refusal-delta", "tool-call-delta"].includes(part.type),
    );
    expect(first).toBe(answer - 1);

    // Capture: the exact request sent (no key in it), and every byte received.
    expect(requests).toEqual([server.requests.at(-1)?.rawBody]);
    expect(requests[0]).not.toContain(KEY);
    expect(JSON.parse(requests[0] ?? "{}")).toMatchObject({ model: expected.requested_model });
    expect(Buffer.concat(responses).toString("utf8")).toBe(sse);
  });
});
