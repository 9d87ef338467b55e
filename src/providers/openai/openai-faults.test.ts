import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closedLoopbackPort } from "../../../test/closed-port.js";
import {
  collectStream,
  completionChunk,
  completionStream,
  errorReply,
  FakeOpenAIServer,
  type ScriptedResponse,
  SSE_DONE,
  sseEvent,
  streamReply,
} from "../../../test/fake-openai-server.js";
import type { ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { ProviderApiError, ProviderConnectionError, ProviderStreamError } from "../errors.js";
import { OpenAIChatModel } from "./openai-chat-model.js";
import type { OpenAIConfigInput } from "./openai-config.js";

/**
 * Every fault of an OpenAI-compatible endpoint, each with its promised behaviour: what is retried
 * (only before a response streams), what it becomes when it is not, and what stops it.
 */

const KEY = "sk-test-NEVER-LEAK-91c2e7";

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await FakeOpenAIServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(config: Partial<OpenAIConfigInput> = {}): OpenAIChatModel {
  return new OpenAIChatModel(
    {
      model: "gpt-test",
      base_url: server.baseUrl,
      api_key_env: "TEST_OPENAI_KEY",
      // Backoff in milliseconds, not seconds; jitter off so delays are exact.
      retry_base_delay_ms: 5,
      ...config,
    },
    { env: { TEST_OPENAI_KEY: KEY }, random: () => 0 },
  );
}

const request: ChatModelRequest = {
  messages: [{ role: "user", content: "Hello?", tool_calls: [] }],
};

const success = streamReply(completionStream({ text: ["Hi", " there"] }));

function ofType<T extends ChatModelPart["type"]>(
  parts: readonly ChatModelPart[],
  type: T,
): Extract<ChatModelPart, { type: T }>[] {
  return parts.filter((part): part is Extract<ChatModelPart, { type: T }> => part.type === type);
}

function text(parts: readonly ChatModelPart[]): string {
  return ofType(parts, "text-delta")
    .map((part) => part.text)
    .join("");
}

describe("retries before a response streams", () => {
  it("retries a 429 after the wait retry-after-ms asks for, then streams", async () => {
    server.enqueue(
      errorReply(429, "Rate limit reached", { "retry-after-ms": "20", "x-request-id": "req_1" }),
      success,
    );
    const started = performance.now();
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeNull();
    expect(performance.now() - started).toBeGreaterThanOrEqual(20);
    expect(ofType(parts, "retry")).toEqual([
      {
        type: "retry",
        attempt: 1,
        status: 429,
        reason: "status 429: Rate limit reached",
        delay_ms: 20,
      },
    ]);
    expect(parts[0]?.type).toBe("retry");
    expect(parts[1]).toMatchObject({ type: "response-start", attempt: 2, status: 200 });
    expect(ofType(parts, "finish")[0]).toMatchObject({ finish_reason: "stop", attempts: 2 });
    expect(text(parts)).toBe("Hi there");
    expect(server.requests).toHaveLength(2);
  });

  it("honours retry-after in seconds (0 means at once)", async () => {
    server.enqueue({ status: 429, headers: { "retry-after": "0" } }, success);
    const { parts, error } = await collectStream(
      model({ retry_base_delay_ms: 5_000 }).stream(request),
    );
    expect(error).toBeNull();
    expect(ofType(parts, "retry")[0]?.delay_ms).toBe(0);
  });

  it("retries 500 twice with exponential backoff, then streams on the third attempt", async () => {
    server.enqueue(errorReply(500, "boom"), errorReply(500, "boom"), success);
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeNull();
    expect(
      ofType(parts, "retry").map(({ attempt, status, delay_ms }) => ({
        attempt,
        status,
        delay_ms,
      })),
    ).toEqual([
      { attempt: 1, status: 500, delay_ms: 5 },
      { attempt: 2, status: 500, delay_ms: 10 },
    ]);
    expect(ofType(parts, "finish")[0]?.attempts).toBe(3);
    expect(server.requests).toHaveLength(3);
  });

  it("gives up after max_retries with a retryable ProviderApiError", async () => {
    server.enqueue(
      errorReply(500, "The server had an error", { "x-request-id": "req_last" }),
      errorReply(500, "The server had an error", { "x-request-id": "req_last" }),
      errorReply(500, "The server had an error", { "x-request-id": "req_last" }),
      success,
    );
    const { parts, error } = await collectStream(model({ max_retries: 2 }).stream(request));

    expect(error).toBeInstanceOf(ProviderApiError);
    expect(error).toMatchObject({
      code: "provider_api_error",
      status: 500,
      retryable: true,
      attempts: 3,
      requestId: "req_last",
      endpointMessage: "The server had an error",
    });
    expect((error as Error).message).toBe(
      `model endpoint ${server.baseUrl} answered 500: The server had an error (request id req_last) after 3 attempts`,
    );
    expect(parts.map((part) => part.type)).toEqual(["retry", "retry"]);
    expect(server.requests).toHaveLength(3);
    expect(server.pending).toBe(1);
  });

  it("retries 408 and 409 too", async () => {
    server.enqueue({ status: 408 }, { status: 409 }, success);
    const { parts, error } = await collectStream(model().stream(request));
    expect(error).toBeNull();
    expect(ofType(parts, "retry").map((part) => part.status)).toEqual([408, 409]);
  });

  it("does not retry a 400, and reports the endpoint's message", async () => {
    server.enqueue(errorReply(400, "Invalid 'messages[0].role': 'robot'."), success);
    const { parts, error } = await collectStream(model().stream(request));

    expect(parts).toEqual([]);
    expect(error).toBeInstanceOf(ProviderApiError);
    expect(error).toMatchObject({ status: 400, retryable: false, attempts: 1 });
    expect((error as ProviderApiError).endpointMessage).toBe(
      "Invalid 'messages[0].role': 'robot'.",
    );
    expect((error as Error).message).toContain("Invalid 'messages[0].role': 'robot'.");
    expect(server.requests).toHaveLength(1);
  });

  it("does not quote a non-JSON error body, and shortens a long message", async () => {
    server.enqueue({ status: 404, body: ["<html>secret internal proxy page</html>"] });
    const { error } = await collectStream(model().stream(request));
    expect(error).toMatchObject({ status: 404, endpointMessage: null });
    expect((error as Error).message).not.toContain("proxy page");

    server.enqueue(errorReply(422, "x".repeat(5_000)));
    const long = await collectStream(model().stream(request));
    expect(((long.error as ProviderApiError).endpointMessage ?? "").length).toBeLessThanOrEqual(
      500,
    );
  });

  it("obeys x-should-retry: false on a 503, and x-should-retry: true on a 400", async () => {
    server.enqueue({ status: 503, headers: { "x-should-retry": "false" } });
    const refused = await collectStream(model().stream(request));
    expect(refused.error).toMatchObject({ status: 503, retryable: false, attempts: 1 });
    expect(server.requests).toHaveLength(1);

    server.enqueue({ status: 400, headers: { "x-should-retry": "true" } }, success);
    const retried = await collectStream(model().stream(request));
    expect(retried.error).toBeNull();
    expect(ofType(retried.parts, "retry")).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
    expect(server.pending).toBe(0);
  });

  it("retries a connection reset before headers", async () => {
    server.enqueue({ kind: "reset" }, success);
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeNull();
    expect(ofType(parts, "retry")).toEqual([
      {
        type: "retry",
        attempt: 1,
        status: null,
        reason: expect.stringMatching(
          /^could not reach http:\/\/127\.0\.0\.1:\d+\/v1: connection failed \(ECONNRESET/,
        ),
        delay_ms: 5,
      },
    ]);
    expect(text(parts)).toBe("Hi there");
    expect(server.requests).toHaveLength(2);
  });

  it("fails with ProviderConnectionError when the connection keeps being reset", async () => {
    server.enqueue({ kind: "reset" }, { kind: "reset" }, { kind: "reset" }, success);
    const { parts, error } = await collectStream(model({ max_retries: 2 }).stream(request));

    expect(error).toBeInstanceOf(ProviderConnectionError);
    expect(error).toMatchObject({ code: "provider_connection_error", attempts: 3 });
    expect((error as Error).message).toContain(server.baseUrl);
    expect((error as Error).message).toContain("after 3 attempts");
    expect(parts.map((part) => part.type)).toEqual(["retry", "retry"]);
    expect(server.requests).toHaveLength(3);
  });

  it("fails with ProviderConnectionError when nothing listens, after one quick retry", async () => {
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/v1`;
    const chat = new OpenAIChatModel(
      { model: "m", base_url: url, max_retries: 2, retry_base_delay_ms: 1_000 },
      { env: {} },
    );
    const { parts, error } = await collectStream(chat.stream(request));
    expect(error).toBeInstanceOf(ProviderConnectionError);
    expect(error).toMatchObject({ attempts: 2 });
    expect((error as Error).message).toBe(
      `connection refused at ${url}: is the server running? (after 2 attempts)`,
    );
    // One retry whatever max_retries says, after a short wait rather than the 1 s backoff.
    expect(ofType(parts, "retry")).toEqual([
      { type: "retry", attempt: 1, status: null, reason: expect.any(String), delay_ms: 250 },
    ]);
  });
});

describe("faults once a response streams (never retried)", () => {
  it("a socket cut mid-stream is connection_lost", async () => {
    server.enqueue(
      streamReply(completionStream({ text: ["Partial", " answer"] }).slice(0, 3), {
        ending: "destroy",
      }),
      success,
    );
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeInstanceOf(ProviderStreamError);
    expect(error).toMatchObject({ code: "provider_stream_error", failure: "connection_lost" });
    expect(text(parts)).toBe("Partial answer");
    expect(parts.map((part) => part.type)).not.toContain("finish");
    expect(server.requests).toHaveLength(1);
  });

  it("a stream that ends cleanly without a finish reason is no_finish_reason", async () => {
    server.enqueue(
      streamReply(
        completionStream({ text: ["Cut"], finishReason: null, usage: null, done: false }),
      ),
      success,
    );
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeInstanceOf(ProviderStreamError);
    expect(error).toMatchObject({ failure: "no_finish_reason" });
    expect(text(parts)).toBe("Cut");
    expect(parts.map((part) => part.type)).not.toContain("finish");
    expect(server.requests).toHaveLength(1);
  });

  it("[DONE] without any finish reason is no_finish_reason too", async () => {
    server.enqueue(streamReply(completionStream({ text: ["Cut"], finishReason: null })));
    const { error } = await collectStream(model().stream(request));
    expect(error).toMatchObject({ failure: "no_finish_reason" });
  });

  it("a chunk that is not JSON is malformed_json, and its payload stays out of the message", async () => {
    server.enqueue(
      streamReply([
        sseEvent(completionChunk({ content: "Hi" })),
        'data: {"choices": [PAYLOAD-MARKER-abc\n\n',
        ...completionStream({}).slice(1),
      ]),
      success,
    );
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeInstanceOf(ProviderStreamError);
    expect(error).toMatchObject({ failure: "malformed_json" });
    expect((error as Error).message).not.toContain("PAYLOAD-MARKER");
    expect(text(parts)).toBe("Hi");
    expect(server.requests).toHaveLength(1);
  });

  it("an error field after a 200 is error_event with the endpoint's message", async () => {
    server.enqueue(
      streamReply([
        sseEvent(completionChunk({ content: "Hi" })),
        sseEvent({ error: { message: "The model is overloaded.", type: "server_error" } }),
        SSE_DONE,
      ]),
      success,
    );
    const { parts, error } = await collectStream(model().stream(request));

    expect(error).toBeInstanceOf(ProviderStreamError);
    expect(error).toMatchObject({ failure: "error_event" });
    expect((error as Error).message).toContain("The model is overloaded.");
    expect(text(parts)).toBe("Hi");
    expect(server.requests).toHaveLength(1);
  });

  it("an `event: error` is error_event as well", async () => {
    server.enqueue(streamReply([sseEvent({ message: "upstream timed out" }, "error")]));
    const { error } = await collectStream(model().stream(request));
    expect(error).toMatchObject({ failure: "error_event" });
    expect((error as Error).message).toContain("upstream timed out");
  });

  it("a stalled stream fails with idle_timeout and closes the connection", async () => {
    server.enqueue(
      streamReply([sseEvent(completionChunk({ content: "Hi" }))], { ending: "stall" }),
      success,
    );
    const started = performance.now();
    const { parts, error } = await collectStream(model({ idle_timeout_ms: 100 }).stream(request));
    const waited = performance.now() - started;

    expect(error).toBeInstanceOf(ProviderStreamError);
    expect(error).toMatchObject({ failure: "idle_timeout" });
    // A timer may fire up to a millisecond early against performance.now().
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(1_000);
    expect(text(parts)).toBe("Hi");
    await server.requests[0]?.closed;
    expect(server.requests).toHaveLength(1);
  });

  it("keeps a slow but steady stream alive past the idle timeout", async () => {
    // Each pause well under the idle timeout (a loaded machine stretches them: 60 ms of 100 left
    // it 40 ms), all of them together past it.
    server.enqueue(
      streamReply([
        sseEvent(completionChunk({ content: "a" })),
        { waitMs: 150 },
        sseEvent(completionChunk({ content: "b" })),
        { waitMs: 150 },
        sseEvent(completionChunk({ content: "c" })),
        { waitMs: 150 },
        ...completionStream({ text: ["d"] }).slice(1),
      ]),
    );
    const { parts, error } = await collectStream(model({ idle_timeout_ms: 400 }).stream(request));
    expect(error).toBeNull();
    expect(text(parts)).toBe("abcd");
  });
});

describe("timeouts and cancellation", () => {
  it("times out a request whose headers never come", async () => {
    server.enqueue({ kind: "hang" });
    const started = performance.now();
    const { parts, error } = await collectStream(
      model({ timeout_ms: 100, max_retries: 0 }).stream(request),
    );
    const waited = performance.now() - started;

    expect(error).toBeInstanceOf(ProviderConnectionError);
    expect((error as Error).message).toContain("no response headers within 100 ms");
    // A timer may fire up to a millisecond early against performance.now().
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(1_000);
    expect(parts).toEqual([]);
    await server.requests[0]?.closed;
  });

  it("retries a request timeout like any connection failure", async () => {
    server.enqueue({ kind: "hang" }, success);
    const { parts, error } = await collectStream(model({ timeout_ms: 100 }).stream(request));
    expect(error).toBeNull();
    expect(ofType(parts, "retry")[0]).toMatchObject({
      status: null,
      reason: `no response headers within 100 ms from ${server.baseUrl}`,
    });
  });

  it("aborting mid-stream rejects with the AbortError at once and closes the connection", async () => {
    server.enqueue(
      streamReply([sseEvent(completionChunk({ content: "Hi" }))], { ending: "stall" }),
    );
    const controller = new AbortController();
    const parts: ChatModelPart[] = [];
    let abortedAt = 0;
    const consume = async (): Promise<void> => {
      for await (const part of model().stream(request, { signal: controller.signal })) {
        parts.push(part);
        if (part.type === "text-delta") {
          // Abort from outside while the adapter waits for bytes, as a UI's cancel would.
          setTimeout(() => {
            abortedAt = performance.now();
            controller.abort();
          }, 20);
        }
      }
    };

    const error = await consume().then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe("AbortError");
    expect(error).toBe(controller.signal.reason);
    expect(performance.now() - abortedAt).toBeLessThan(100);
    expect(text(parts)).toBe("Hi");
    await server.requests[0]?.closed;
    expect(server.requests).toHaveLength(1);
  });

  it("aborting during a retry wait rejects at once, without another attempt", async () => {
    server.enqueue({ status: 503, headers: { "retry-after-ms": "5000" } }, success);
    const controller = new AbortController();
    const stream = model().stream(request, { signal: controller.signal });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({ type: "retry", delay_ms: 5000 });

    const started = performance.now();
    const next = iterator.next();
    controller.abort(new DOMException("user cancelled", "AbortError"));
    await expect(next).rejects.toMatchObject({ name: "AbortError", message: "user cancelled" });
    expect(performance.now() - started).toBeLessThan(100);
    expect(server.requests).toHaveLength(1);
  });

  it("an already aborted signal sends nothing", async () => {
    const { error } = await collectStream(model().stream(request, { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ name: "AbortError" });
    expect(server.requests).toHaveLength(0);
  });

  it("aborting before headers rejects with the AbortError, not a connection error", async () => {
    server.enqueue({ kind: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const { error } = await collectStream(model().stream(request, { signal: controller.signal }));
    expect(error).toBe(controller.signal.reason);
    await server.requests[0]?.closed;
  });

  it("breaking out of the loop early cancels the response body", async () => {
    server.enqueue(
      streamReply([sseEvent(completionChunk({ content: "Hi" }))], { ending: "stall" }),
    );
    for await (const part of model().stream(request)) {
      if (part.type === "text-delta") break;
    }
    // Would hang (and time out the test) if the stalled connection were left open.
    await server.requests[0]?.closed;
  });
});

describe("the API key", () => {
  it("never appears in an error message or a retry reason", async () => {
    const echo = `Incorrect API key provided: ${KEY}.`;
    const scripts: ScriptedResponse[][] = [
      [errorReply(401, echo)],
      [errorReply(500, echo), errorReply(500, echo), errorReply(500, echo)],
      [{ kind: "reset" }, { kind: "reset" }, { kind: "reset" }],
      [streamReply([sseEvent({ error: { message: echo } })])],
      [streamReply([sseEvent({ message: echo }, "error")])],
      [streamReply([`data: {"key": "${KEY}"\n\n`])],
      [streamReply([sseEvent(completionChunk({ content: KEY }))], { ending: "destroy" })],
      [streamReply([sseEvent(completionChunk({ content: KEY }))], { ending: "stall" })],
      [{ kind: "hang" }],
    ];
    const texts: string[] = [];
    for (const script of scripts) {
      server.enqueue(...script);
      const { parts, error } = await collectStream(
        model({ timeout_ms: 100, idle_timeout_ms: 100, max_retries: 2 }).stream(request),
      );
      expect(error).toBeInstanceOf(Error);
      texts.push(String(error), (error as Error).message, JSON.stringify(error));
      for (const part of ofType(parts, "retry")) texts.push(part.reason);
    }
    expect(texts.join("\n")).toContain("[redacted]");
    for (const message of texts) expect(message).not.toContain(KEY);
  });
});
