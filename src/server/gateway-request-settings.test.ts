import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { completionStream, streamReply } from "../../test/fake-openai-server.js";
import { fakeUpstreamLabPerTest, LOOKUP_ORDER, waitFor } from "./test-fixtures.js";

/**
 * A client's sampling settings (max_tokens, top_p, seed, stop), its `tool_choice` and its
 * `response_format` when the lab writes the model's request itself (dual_agent, sim): sent to the
 * model and recorded, or refused naming the field, never dropped unsaid. In pass-through the body
 * goes upstream as written.
 */

const gw = fakeUpstreamLabPerTest();

describe("dual_agent sends the client's sampling settings with its chat agent's calls", () => {
  it("max_completion_tokens, top_p, seed, stop and temperature reach the model and the session's config", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Shipped on Monday."] })));
    const reply = await gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Where is order 42?" }],
      tools: [LOOKUP_ORDER],
      max_completion_tokens: 64,
      top_p: 0.5,
      seed: 7,
      stop: "END",
      temperature: 0.3,
    });
    expect(reply.choices[0]?.message.content).toBe("Shipped on Monday.");
    const sent = gw.upstream.requests[0]?.body as Record<string, unknown>;
    expect(sent).toMatchObject({
      max_tokens: 64,
      top_p: 0.5,
      seed: 7,
      stop: ["END"],
      temperature: 0.3,
    });
    await waitFor(
      () => gw.server.store.listTurns(gw.sessions()[0]?.id as string)[0]?.status === "completed",
    );
    expect(gw.sessions()[0]?.config.chat_agent).toMatchObject({
      max_tokens: 64,
      top_p: 0.5,
      seed: 7,
      stop: ["END"],
      temperature: 0.3,
    });
    // The event agent has settings of its own: the client's cap is not put on its arguments.
    expect(gw.sessions()[0]?.config.event_agent).not.toHaveProperty("max_tokens");
  });

  it("each turn of a session is answered with its own request's settings, recorded with the turn", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["First."] })));
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Second."] })));
    const client = gw.client("dual_agent");
    const headers = { "X-Agent-Lab-Session": "settings-per-turn" };
    await client.chat.completions.create(
      {
        model: "fake",
        messages: [{ role: "user", content: "Be brief." }],
        temperature: 0.2,
        max_completion_tokens: 64,
        stop: "END",
      },
      { headers },
    );
    await client.chat.completions.create(
      {
        model: "fake",
        messages: [
          { role: "user", content: "Be brief." },
          { role: "assistant", content: "First." },
          { role: "user", content: "Now at length." },
        ],
        temperature: 0.9,
      },
      { headers },
    );
    const [first, second] = gw.upstream.requests.map((request) => request.body);
    expect(first).toMatchObject({ temperature: 0.2, max_tokens: 64, stop: ["END"] });
    // Not the first request's cap or stop: this request named none, so the endpoint's apply.
    expect(second).toMatchObject({ temperature: 0.9 });
    expect(second).not.toHaveProperty("max_tokens");
    expect(second).not.toHaveProperty("stop");
    const { store } = gw.server;
    await waitFor(() => store.listTurns("settings-per-turn")[1]?.status === "completed");
    const starts = store
      .listAuditLogs("settings-per-turn")
      .filter((row) => row.event === "turn_start")
      .map((row) => row.details.chat_sampling);
    expect(starts).toStrictEqual([
      { temperature: 0.2, max_tokens: 64, stop: ["END"] },
      { temperature: 0.9 },
    ]);
    // The session's config keeps what its first request said.
    expect(store.getSession("settings-per-turn")?.config.chat_agent).toMatchObject({
      temperature: 0.2,
      max_tokens: 64,
    });
  });

  it("takes an empty stop, as some clients send for none, as no stop sequence", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["One."] })));
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Two."] })));
    for (const stop of ["", []]) {
      await gw.client("dual_agent").chat.completions.create({
        model: "fake",
        messages: [{ role: "user", content: "Count" }],
        stop: stop as string,
      });
    }
    for (const request of gw.upstream.requests) expect(request.body).not.toHaveProperty("stop");
  });

  it("takes the deprecated max_tokens, and a list of stop sequences", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Yes."] })));
    await gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Is it late?" }],
      max_tokens: 12,
      stop: ["\n\n", "END"],
    });
    expect(gw.upstream.requests[0]?.body).toMatchObject({ max_tokens: 12, stop: ["\n\n", "END"] });
  });

  it.each([
    ["max_completion_tokens", 0, "max_completion_tokens"],
    ["top_p", 1.5, "top_p"],
    ["seed", 1.5, "seed"],
    ["stop", ["a", "b", "c", "d", "e"], "stop"],
    ["stop", ["END", ""], "stop.1"],
  ])("refuses %s %j naming it, before any call", async (field, value, param) => {
    const refused = gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "hello" }],
      [field]: value,
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    await expect(refused).rejects.toMatchObject({ status: 400, param });
    expect(gw.upstream.requests).toHaveLength(0);
    expect(gw.sessions()).toStrictEqual([]);
  });
});

describe("what the lab cannot honour when it writes the request is refused, not dropped", () => {
  it.each([
    ["required", "required"],
    ["a named function", { type: "function", function: { name: "lookup_order" } }],
  ])("tool_choice %s in dual_agent: 400 naming tool_choice and pass-through", async (_, choice) => {
    const refused = gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Where is order 42?" }],
      tools: [LOOKUP_ORDER],
      tool_choice: choice as OpenAI.ChatCompletionToolChoiceOption,
    });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      param: "tool_choice",
      message: expect.stringMatching(/a tool call cannot be forced.*pass-through/),
    });
    expect(gw.upstream.requests).toHaveLength(0);
    expect(gw.sessions()).toStrictEqual([]);
  });

  it("response_format json_schema in dual_agent: 400 naming response_format", async () => {
    const refused = gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "List three colours" }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "colours", schema: { type: "object" } },
      },
    });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      param: expect.stringMatching(/^response_format/),
      message: expect.stringContaining("cannot be held to a format"),
    });
    expect(gw.upstream.requests).toHaveLength(0);
  });

  it('tool_choice "none" in dual_agent offers the chat agent no tools; "auto" and text format are taken', async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["No tools today."] })));
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Looking."] })));
    const none = await gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Where is order 42?" }],
      tools: [LOOKUP_ORDER],
      tool_choice: "none",
    });
    expect(none.choices[0]?.message.content).toBe("No tools today.");
    const auto = await gw.client("dual_agent").chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "Where is order 7?" }],
      tools: [LOOKUP_ORDER],
      tool_choice: "auto",
      response_format: { type: "text" },
    });
    expect(auto.choices[0]?.message.content).toBe("Looking.");
    const systemOf = (index: number) => {
      const body = gw.upstream.requests[index]?.body as { messages: { content: string }[] };
      return body.messages[0]?.content ?? "";
    };
    expect(systemOf(0)).not.toContain("lookup_order");
    expect(systemOf(1)).toContain("lookup_order");
  });
});

describe("the sim honours the settings it is sent", () => {
  it("stops before a stop sequence with finish_reason stop, and at max_tokens with length", async () => {
    const first = await gw.client().chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "Tell me about agent labs in a few sentences." }],
    });
    const whole = first.choices[0]?.message.content ?? "";
    const word = whole.split(" ")[2] as string;
    expect(whole.indexOf(word)).toBeGreaterThan(0);
    const stopped = await gw.client().chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "Tell me about agent labs in a few sentences." }],
      stop: [word],
    });
    expect(stopped.choices[0]?.finish_reason).toBe("stop");
    expect(stopped.choices[0]?.message.content).toBe(whole.slice(0, whole.indexOf(word)));
    const capped = await gw.client().chat.completions.create({
      model: "sim",
      messages: [{ role: "user", content: "Tell me about agent labs in a few sentences." }],
      max_completion_tokens: 3,
    });
    expect(capped.choices[0]?.finish_reason).toBe("length");
    expect(capped.usage?.completion_tokens).toBe(3);
  });
});

describe("pass-through sends the body as written", () => {
  it("a top_p the lab could not hold goes upstream and stays out of the record; a valid seed is recorded", async () => {
    gw.upstream.enqueue(streamReply(completionStream({ text: ["Sure."] })));
    await gw.client().chat.completions.create({
      model: "fake",
      messages: [{ role: "user", content: "hello" }],
      top_p: 1.5,
      seed: 11,
      tool_choice: "required",
      tools: [LOOKUP_ORDER],
    });
    expect(gw.upstream.requests[0]?.body).toMatchObject({
      top_p: 1.5,
      seed: 11,
      tool_choice: "required",
    });
    await waitFor(
      () => gw.server.store.listTurns(gw.sessions()[0]?.id as string)[0]?.status === "completed",
    );
    expect(gw.sessions()[0]?.config.chat_agent).toMatchObject({ seed: 11 });
    expect(gw.sessions()[0]?.config.chat_agent).not.toHaveProperty("top_p");
  });
});
