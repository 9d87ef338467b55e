import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  collectStream,
  completionChunk,
  completionStream,
  FakeOpenAIServer,
  FINAL_TERMINATORS,
  SSE_PING,
  sseEvent,
  streamReply,
  unterminatedFinish,
} from "../../../test/fake-openai-server.js";
import type { ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { ProviderConnectionError, ProviderStreamError } from "../errors.js";
import { OpenAIChatModel } from "./openai-chat-model.js";
import type { OpenAIConfigInput } from "./openai-config.js";

/**
 * How a call always ends: a stream that only pings is idle, a call past its deadline is over
 * whatever it is doing, an endpoint that never sends headers is given up on in bounded time, and a
 * last event without its blank line still counts.
 */

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await FakeOpenAIServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(config: Partial<OpenAIConfigInput> = {}): OpenAIChatModel {
  return new OpenAIChatModel(
    { model: "gpt-test", base_url: server.baseUrl, retry_base_delay_ms: 5, ...config },
    { env: {}, random: () => 0 },
  );
}

const request: ChatModelRequest = {
  messages: [{ role: "user", content: "Hello?", tool_calls: [] }],
};

function text(parts: readonly ChatModelPart[]): string {
  return parts.map((part) => (part.type === "text-delta" ? part.text : "")).join("");
}

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await run();
  return { result, ms: performance.now() - start };
}

describe("a stall always ends", () => {
  it("a stream that sends one chunk, then only `: ping` comments, ends with idle_timeout", async () => {
    server.enqueue(
      streamReply([sseEvent(completionChunk({ content: "Hi" }))], {
        ending: "stall",
        keepAlive: { text: SSE_PING, everyMs: 20 },
      }),
    );
    const { result, ms } = await timed(() =>
      collectStream(model({ idle_timeout_ms: 150 }).stream(request)),
    );
    expect(result.error).toBeInstanceOf(ProviderStreamError);
    expect(result.error).toMatchObject({ failure: "idle_timeout" });
    expect((result.error as Error).message).toContain("no progress for 150 ms");
    expect(text(result.parts)).toBe("Hi");
    expect(ms).toBeGreaterThanOrEqual(145);
    expect(ms).toBeLessThan(2_000);
    await server.requests[0]?.closed;
  });

  it("empty and role-only chunks are not progress either", async () => {
    const empty = sseEvent(completionChunk({}));
    const roleOnly = sseEvent(completionChunk({ role: "assistant", content: "" }));
    server.enqueue(
      streamReply([sseEvent(completionChunk({ content: "Hi" })), roleOnly], {
        ending: "stall",
        keepAlive: { text: empty, everyMs: 20 },
      }),
    );
    const { error } = await collectStream(model({ idle_timeout_ms: 150 }).stream(request));
    expect(error).toMatchObject({ failure: "idle_timeout" });
  });

  it("reasoning deltas are progress: a model thinking aloud past the idle timeout is not stalled", async () => {
    const thinking = sseEvent(completionChunk({ reasoning_content: "hmm" } as never));
    // Each pause well under the idle timeout (a loaded machine stretches them), all of them
    // together past it.
    server.enqueue(
      streamReply([
        thinking,
        { waitMs: 150 },
        thinking,
        { waitMs: 150 },
        thinking,
        { waitMs: 150 },
        ...completionStream({ text: ["Done"] }),
      ]),
    );
    const { parts, error } = await collectStream(model({ idle_timeout_ms: 400 }).stream(request));
    expect(error).toBeNull();
    expect(text(parts)).toBe("Done");
  });

  it("the deadline ends a slow stream that keeps progressing", async () => {
    const steps = [];
    for (let index = 0; index < 100; index++) {
      steps.push(sseEvent(completionChunk({ content: "." })), { waitMs: 30 });
    }
    server.enqueue(streamReply(steps));
    const { result, ms } = await timed(() =>
      collectStream(model({ idle_timeout_ms: 1_000, deadline_ms: 250 }).stream(request)),
    );
    expect(result.error).toBeInstanceOf(ProviderStreamError);
    expect(result.error).toMatchObject({ failure: "deadline_exceeded" });
    expect((result.error as Error).message).toContain("deadline of 250 ms");
    expect(text(result.parts).length).toBeGreaterThan(0);
    expect(ms).toBeGreaterThanOrEqual(245);
    expect(ms).toBeLessThan(2_000);
    await server.requests[0]?.closed;
  });

  it("the deadline covers retries and backoff too, and is not retried", async () => {
    server.enqueue({ kind: "hang" }, { kind: "hang" }, { kind: "hang" });
    const { result, ms } = await timed(() =>
      collectStream(model({ timeout_ms: 1_000, max_retries: 5, deadline_ms: 200 }).stream(request)),
    );
    expect(result.error).toMatchObject({ failure: "deadline_exceeded" });
    expect(ms).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it("no headers at all: the wait is retried once, then the call fails", async () => {
    server.enqueue({ kind: "hang" }, { kind: "hang" }, { kind: "hang" }, { kind: "hang" });
    const { result, ms } = await timed(() =>
      collectStream(model({ timeout_ms: 100, max_retries: 3 }).stream(request)),
    );
    expect(result.error).toBeInstanceOf(ProviderConnectionError);
    expect((result.error as Error).message).toContain("no response headers within 100 ms");
    expect((result.error as Error).message).toContain("after 2 attempts");
    expect(result.parts.map((part) => part.type)).toEqual(["retry"]);
    // Two attempts, as the error says; the server records one when it has read its body, which a
    // loaded machine may not do within the attempt's 100 ms (a clean-clone run recorded one).
    expect(server.requests.length).toBeGreaterThanOrEqual(1);
    expect(server.requests.length).toBeLessThanOrEqual(2);
    expect(ms).toBeLessThan(1_000);
  });

  it("the caller's abort still wins over the deadline, with its own reason", async () => {
    server.enqueue({ kind: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const { error } = await collectStream(
      model({ deadline_ms: 10_000 }).stream(request, { signal: controller.signal }),
    );
    expect(error).toBe(controller.signal.reason);
  });
});

describe("an unterminated final event is not dropped", () => {
  it.each(Object.entries(FINAL_TERMINATORS))(
    "a last event (with the finish reason) ended by %s completes the call",
    async (_name, terminator) => {
      server.enqueue(streamReply(unterminatedFinish("All here", terminator)));
      const { parts, error } = await collectStream(model().stream(request));
      expect(error).toBeNull();
      expect(text(parts)).toBe("All here");
      expect(parts.at(-1)).toMatchObject({ type: "finish", finish_reason: "stop" });
    },
  );

  it("a last event cut mid-JSON is still no_finish_reason", async () => {
    const [role, content, final] = unterminatedFinish("Cut", "");
    server.enqueue(streamReply([role ?? "", content ?? "", (final ?? "").slice(0, -12)]));
    const { error } = await collectStream(model().stream(request));
    expect(error).toMatchObject({ failure: "no_finish_reason" });
  });
});
