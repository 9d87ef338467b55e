import { join } from "node:path";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  completionChunk,
  completionStream,
  SSE_DONE,
  sseEvent,
  streamReply,
} from "../../test/fake-openai-server.js";
import { temporaryDirectory } from "../../test/paths.js";
import { StorageError } from "../domain/errors.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { startServer } from "./start-server.js";
import {
  fakeUpstreamDefaults,
  fakeUpstreamLabPerTest,
  startTestServer,
  waitFor,
} from "./test-fixtures.js";

/**
 * Requests a client may send that the lab once refused, or left unrecorded, only after the
 * upstream had been called: everything the lab itself must accept is decided before any call.
 */

const gw = fakeUpstreamLabPerTest();

// 79 characters, then a character of two UTF-16 units across the title's cut at 80.
const LONG_WITH_EMOJI = `${"Summarise the reviews and rate the overall sentiment of them, please, kindly ".padEnd(79, ".")}🙂 thanks`;

describe("the gateway decides before any upstream call", () => {
  it("titles a session from a first message whose 80th character is an emoji, without cutting it in two", async () => {
    expect(LONG_WITH_EMOJI.codePointAt(79)).toBe(0x1f642);
    await gw.client().chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: LONG_WITH_EMOJI }],
    });
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Mostly glad."] })));
    const stream = await gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: LONG_WITH_EMOJI }],
      stream: true,
    });
    for await (const _ of stream) {
      // read to the end
    }
    await waitFor(() => gw.sessions().length === 2);
    expect(gw.sessions().map((session) => session?.title)).toStrictEqual([
      LONG_WITH_EMOJI.slice(0, 79),
      LONG_WITH_EMOJI.slice(0, 79),
    ]);
  });

  it("a temperature the lab cannot send itself (sim, dual_agent) is refused naming it, before anything runs", async () => {
    const refused = gw.client().chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "hello" }],
      temperature: 2.5,
    });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      param: "temperature",
      message: expect.stringContaining("must be at most 2"),
    });
    expect(gw.sessions()).toStrictEqual([]);
  });

  it("in pass-through the upstream judges the temperature: the request goes as sent, the record leaves it out", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Warm."] })));
    const reply = await gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "hello" }],
      temperature: 2.5,
    });
    expect(reply.choices[0]?.message.content).toBe("Warm.");
    expect(gw.upstream.requests[0]?.body).toMatchObject({ temperature: 2.5 });
    await waitFor(
      () => gw.server.store.listTurns(gw.sessions()[0]?.id as string)[0]?.status === "completed",
    );
    expect(gw.sessions()[0]?.config.chat_agent).not.toHaveProperty("temperature");
  });
});

describe("the size of a gateway request", () => {
  it("takes a screenshot-sized image (a 2 MB data URL) that the API's 1 MiB limit would refuse", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["A login page."] })));
    const image = `data:image/png;base64,${"A".repeat(2 * 1024 * 1024)}`;
    const reply = await gw.client().chat.completions.create({
      model: "fake",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is on this screen?" },
            { type: "image_url", image_url: { url: image } },
          ],
        },
      ],
    });
    expect(reply.choices[0]?.message.content).toBe("A login page.");
    expect(JSON.stringify(gw.upstream.requests[0]?.body)).toContain(image);
  });

  it("past the gateway's own limit, 413 in OpenAI's format, naming the limit, and no upstream call", async () => {
    const small = await startTestServer({ maxGatewayBodyBytes: 4096 });
    try {
      const refused = new OpenAI({
        baseURL: new URL("/v1", small.url).href,
        apiKey: small.server.token as string,
        maxRetries: 0,
      }).chat.completions.create({
        model: "sim",
        messages: [{ role: "user", content: "x".repeat(5000) }],
      });
      await expect(refused).rejects.toMatchObject({
        status: 413,
        message: expect.stringContaining("larger than 4096 bytes"),
      });
      expect(small.store.listSessions()).toStrictEqual([]);
    } finally {
      await small.close();
    }
  });
});

describe("images in a conversation", () => {
  const withImage = (text: string): OpenAI.ChatCompletionMessageParam => ({
    role: "user",
    content: [
      { type: "text", text },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
    ],
  });

  it("dual_agent, which writes its request from the text, refuses one naming the message, before any call", async () => {
    const refused = gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [withImage("What is on this screen?")],
    });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(
        /messages\.0\.content: dual_agent sends the model the conversation's text only/,
      ),
    });
    expect(gw.upstream.requests).toHaveLength(0);
    expect(gw.sessions()).toStrictEqual([]);
  });

  it("dual_agent names the serving model in every streamed chunk, as in its JSON answer", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["One ", "two."] })));
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Three."] })));
    const ask = { model: "fake", messages: [{ role: "user" as const, content: "Count" }] };
    const chunks = await gw.client("dual_agent").chat.completions.create({ ...ask, stream: true });
    const named = new Set<string>();
    for await (const chunk of chunks) named.add(chunk.model);
    const whole = await gw.client("dual_agent").chat.completions.create(ask);
    // The upstream's chunks say "fake-model"; the client asked for the lab's name "fake".
    expect(whole.model).toBe("fake-model");
    expect([...named]).toEqual(["fake-model"]);
  });

  it("dual_agent sends a user message of several text parts one part per line", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Done."] })));
    await gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Summarise:" },
            { type: "text", text: "the build log" },
          ],
        },
      ],
    });
    const sent = gw.upstream.requests[0]?.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: "Summarise:\nthe build log" });
  });

  it("dual_agent takes a conversation whose assistant message is a refusal part (not media)", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Fine, here it is."] })));
    const reply = await gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [
        { role: "user", content: "Tell me a secret" },
        { role: "assistant", content: [{ type: "refusal", refusal: "I cannot." }] },
        { role: "user", content: "Then tell me a joke" },
      ],
    });
    expect(reply.choices[0]?.message.content).toBe("Fine, here it is.");
  });

  it("pass-through sends it as it is and records the user message with its parts' kinds after the text", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["A login page."] })));
    await gw.client().chat.completions.create({
      model: "fake",
      messages: [withImage("What is on this screen?")],
    });
    const id = gw.sessions()[0]?.id as string;
    await waitFor(() => gw.server.store.listTurns(id)[0]?.status === "completed");
    expect(gw.server.store.listTurns(id)[0]?.user_message).toBe(
      "What is on this screen? [image_url]",
    );
  });
});

describe("an upstream's refusal as the client reads it", () => {
  it("keeps the upstream's param and code (which field, and why), not only its status", async () => {
    gw.upstream.enqueue({
      status: 400,
      headers: {},
      body: [
        JSON.stringify({
          error: {
            message: "temperature is too high for this model",
            type: "invalid_request_error",
            param: "temperature",
            code: "invalid_value",
          },
        }),
      ],
    });
    const refused = gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "hello" }],
      temperature: 1.9,
    });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      param: "temperature",
      code: "invalid_value",
      message: expect.stringContaining("temperature is too high for this model"),
    });
  });
});

describe("what a client that asked for no stream is told of how the answer ended", () => {
  it("an answer cut at the upstream's token limit ends with finish_reason length, as the upstream said", async () => {
    gw.upstream.enqueue(
      streamReply(completionStream({ text: ["It was the best"], finishReason: "length" })),
    );
    const reply = await gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Tell me a long story" }],
      max_tokens: 4,
    });
    expect(reply.choices[0]).toMatchObject({
      finish_reason: "length",
      message: { content: "It was the best" },
    });
  });

  it("a refusal reaches the client as `refusal`, not as an empty answer", async () => {
    const refusing = {
      ...completionChunk({}),
      choices: [{ index: 0, delta: { refusal: "I can't help with that." }, finish_reason: null }],
    };
    gw.upstream.enqueue(
      streamReply([
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        sseEvent(refusing),
        sseEvent(completionChunk({}, "stop")),
        SSE_DONE,
      ]),
    );
    const reply = await gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Something it refuses" }],
    });
    expect(reply.choices[0]?.message).toMatchObject({
      content: null,
      refusal: "I can't help with that.",
    });
  });
});

describe("a pass-through call that fails is timed from its start", () => {
  it("an upstream that waits, then cuts its stream: the call's elapsed time holds the wait", async () => {
    const [role, hello] = completionStream({ text: ["Hello"] });
    gw.upstream.enqueue(
      streamReply([{ waitMs: 400 }, role as string, hello as string], { ending: "destroy" }),
    );
    const stream = await gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const read = (async () => {
      for await (const _ of stream) {
        // read until the cut
      }
    })();
    await expect(read).rejects.toThrow();
    await waitFor(() => gw.server.store.listSessions().length === 1);
    const id = gw.server.store.listSessions()[0]?.id as string;
    await waitFor(() => gw.server.store.listTurns(id)[0]?.status === "failed");
    const [call] = gw.server.store.usageSummary(id).calls;
    // The runtime reads the call only once its first bytes are in, 400 ms after it started.
    expect(call?.ttft_ms).toBeGreaterThanOrEqual(390);
    expect(call?.elapsed_ms).toBeGreaterThanOrEqual(call?.ttft_ms as number);
  });
});

describe("a pass-through answer the lab could not record", () => {
  /**
   * A streamed pass-through answer through a lab whose store's `method` fails (after 150 ms, once
   * the client has the whole answer): what the client read, the server's log, the store.
   */
  async function answerWithFailing(method: "claimTurn" | "appendRecords", failure: Error) {
    const directory = temporaryDirectory();
    const store = new SqliteSessionStore(join(directory.path, "lab.sqlite3"));
    const logs: string[] = [];
    const failing = new Proxy(store, {
      get(target, property, receiver) {
        if (property === method) {
          return async () => {
            await new Promise((resolve) => setTimeout(resolve, 150));
            throw failure;
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const lab = await startServer({
      store: failing,
      port: 0,
      webRoot: join(directory.path, "no-web-build"),
      log: (line) => logs.push(line),
      runTurnDefaults: fakeUpstreamDefaults(gw.upstream.baseUrl),
    });
    try {
      gw.upstream.enqueue(streamReply(completionStream({ text: ["All", " of", " it."] })));
      const stream = await new OpenAI({
        baseURL: new URL("/v1", lab.url).href,
        apiKey: lab.token as string,
        maxRetries: 0,
      }).chat.completions.create({
        model: "fake",
        messages: [{ role: "user", content: "hello" }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      await waitFor(() => logs.some((line) => line.includes(failure.message)));
      return { text, turns: store.listTurns(store.listSessions()[0]?.id as string) };
    } finally {
      await lab.close();
      store.close();
      directory.remove();
    }
  }

  it("a round the database refuses after the client had the whole answer is in the server's log", async () => {
    const failure = new StorageError("database or disk is full", "SQLITE_FULL");
    const { text } = await answerWithFailing("appendRecords", failure);
    expect(text).toBe("All of it.");
  });

  it("reaches the client whole, and the server's log says the turn was not recorded and why", async () => {
    // The claim fails once the client has had the whole answer: nothing else would tell of it.
    const { text, turns } = await answerWithFailing(
      "claimTurn",
      new Error("database or disk is full"),
    );
    expect(text).toBe("All of it.");
    expect(turns).toEqual([]);
  });
});
