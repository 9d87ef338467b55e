import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closedLoopbackPort } from "../../../test/closed-port.js";
import {
  collectStream,
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../../test/fake-openai-server.js";
import { InvalidInputError } from "../../domain/errors.js";
import type { ChatModelRequest } from "../chat-model.js";
import { createChatModel } from "../create-chat-model.js";
import { ProviderApiError, ProviderConnectionError } from "../errors.js";
import { OpenAIChatModel } from "./openai-chat-model.js";

/**
 * Endpoints that explain themselves: each way of pointing the lab at the wrong place fails with a
 * message naming the URL and the likely fix, after as few attempts as can help, never with the key.
 */

const KEY = "sk-test-ENDPOINT-FAILURES-7c1d";
const request: ChatModelRequest = { messages: [{ role: "user", content: "hi", tool_calls: [] }] };

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await FakeOpenAIServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(base_url: string, env: Record<string, string> = { LAB_KEY: KEY }) {
  return new OpenAIChatModel(
    { model: "m", base_url, api_key_env: "LAB_KEY", max_retries: 2, retry_base_delay_ms: 1 },
    { env },
  );
}

describe("a missing key", () => {
  it("is said before any request, naming the variable and the URL", () => {
    const attempts: string[] = [];
    const countingFetch: typeof fetch = async (input) => {
      attempts.push(String(input));
      throw new Error("no request should be made");
    };
    const build = (selection: Parameters<typeof createChatModel>[0]) => {
      try {
        createChatModel(selection, { env: {}, fetch: countingFetch });
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as Error).message;
      }
      return null;
    };
    expect(build({ model: "openai:gpt-4.1-mini" })).toBe(
      "`OPENAI_API_KEY` is not set; the endpoint at https://api.openai.com/v1 needs a key",
    );
    expect(
      build({
        model: "openai:m",
        base_url: "https://router.example.com/api/v1/",
        api_key_env: "ROUTER_KEY",
      }),
    ).toBe(
      "`ROUTER_KEY` is not set; the endpoint at https://router.example.com/api/v1 needs a key",
    );
    // A local endpoint works without one.
    expect(build({ model: "openai:m", base_url: server.baseUrl, api_key_env: "ROUTER_KEY" })).toBe(
      null,
    );
    expect(attempts).toEqual([]);
  });

  it("on a 401 from an endpoint that got no key, the error says none was sent and why", async () => {
    server.enqueue(errorReply(401, "Missing bearer token"), errorReply(401, "Invalid key"));
    const keyless = await collectStream(model(server.baseUrl, {}).stream(request));
    expect(keyless.error).toBeInstanceOf(ProviderApiError);
    expect((keyless.error as Error).message).toBe(
      `model endpoint ${server.baseUrl} answered 401: Missing bearer token; no key was sent: \`LAB_KEY\` is not set`,
    );
    expect(server.requests[0]?.headers.authorization).toBeUndefined();

    // With a key sent, the endpoint's word stands alone, and the key is in no message.
    const keyed = await collectStream(model(server.baseUrl).stream(request));
    expect((keyed.error as Error).message).toBe(
      `model endpoint ${server.baseUrl} answered 401: Invalid key`,
    );
    expect(server.requests[1]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests).toHaveLength(2);
  });
});

describe("a wrong base URL", () => {
  it("a 404 from a base URL without a version asks whether /v1 is missing, and is not retried", async () => {
    const bare = server.baseUrl.replace(/\/v1$/, "");
    server.enqueue(errorReply(404, "Not Found"), errorReply(404, "The model `m` does not exist"));
    const { parts, error } = await collectStream(model(bare).stream(request));
    expect(error).toBeInstanceOf(ProviderApiError);
    expect((error as Error).message).toBe(
      `model endpoint ${bare} answered 404: Not Found; is \`/v1\` missing from the base URL?`,
    );
    expect(parts.filter((part) => part.type === "retry")).toEqual([]);
    expect(server.requests.map((sent) => sent.path)).toEqual(["/chat/completions"]);

    // With /v1 in place a 404 is something else (an unknown model): no hint.
    const versioned = await collectStream(model(server.baseUrl).stream(request));
    expect((versioned.error as Error).message).toBe(
      `model endpoint ${server.baseUrl} answered 404: The model \`m\` does not exist`,
    );
  });

  it("a host that does not resolve fails at once: no retry, the host and URL named", async () => {
    const url = "http://no-such-host.invalid/v1";
    const { parts, error } = await collectStream(model(url).stream(request));
    expect(error).toBeInstanceOf(ProviderConnectionError);
    expect(error).toMatchObject({ attempts: 1 });
    expect((error as Error).message).toBe(
      `no such host: no-such-host.invalid (from the base URL ${url}) does not resolve`,
    );
    expect((error as Error).message).not.toContain(KEY);
    expect(parts).toEqual([]);
  });

  it("a refused connection is retried once, quickly, and then named", async () => {
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/v1`;
    const { parts, error } = await collectStream(model(url).stream(request));
    expect((error as Error).message).toBe(
      `connection refused at ${url}: is the server running? (after 2 attempts)`,
    );
    expect((error as Error).message).not.toContain(KEY);
    expect(parts.map((part) => part.type)).toEqual(["retry"]);
  });

  it("a reset connection still gets every retry it is allowed", async () => {
    server.enqueue({ kind: "reset" }, { kind: "reset" }, { kind: "reset" });
    const { parts, error } = await collectStream(model(server.baseUrl).stream(request));
    expect(error).toMatchObject({ code: "provider_connection_error", attempts: 3 });
    expect((error as Error).message).toMatch(
      new RegExp(`^could not reach ${server.baseUrl.replace(/\./g, "\\.")}: connection failed`),
    );
    expect(parts.map((part) => part.type)).toEqual(["retry", "retry"]);
  });
});

describe("a call's own fetch (StreamOptions.fetch, the gateway's tapped call)", () => {
  it("carries every attempt of that call, retries included, and the model's own fetch none", async () => {
    const own: string[] = [];
    const perCall: string[] = [];
    const counting =
      (log: string[]): typeof fetch =>
      (input, init) => {
        log.push(String(input));
        return fetch(input, init);
      };
    const shared = new OpenAIChatModel(
      {
        model: "m",
        base_url: server.baseUrl,
        api_key_env: "LAB_KEY",
        max_retries: 2,
        retry_base_delay_ms: 1,
      },
      { env: { LAB_KEY: KEY }, fetch: counting(own) },
    );
    server.enqueue(
      errorReply(429, "slow down"),
      streamReply(completionStream({ text: ["hel", "lo"] })),
      streamReply(completionStream({ text: ["again"] })),
    );
    const first = await collectStream(shared.stream(request, { fetch: counting(perCall) }));
    expect(first.error).toBeNull();
    expect(
      first.parts.filter((part) => part.type === "text-delta").map((part) => part.text),
    ).toEqual(["hel", "lo"]);
    expect(perCall).toEqual([
      `${server.baseUrl}/chat/completions`,
      `${server.baseUrl}/chat/completions`,
    ]);
    expect(own).toEqual([]);
    // The next call without one goes through the model's own.
    expect((await collectStream(shared.stream(request))).error).toBeNull();
    expect(own).toHaveLength(1);
    expect(perCall).toHaveLength(2);
  });
});
