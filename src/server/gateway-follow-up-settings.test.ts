import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { completionStream, errorReply, streamReply } from "../../test/fake-openai-server.js";
import { fakeUpstreamLabPerTest, LOOKUP_ORDER, waitFor } from "./test-fixtures.js";

/**
 * When the lab writes the model's request itself (dual_agent), each request of the client's loop
 * is honoured as its upstream would honour it: a follow-up's sampling settings are the ones its
 * answer is written with, and `parallel_tool_calls: false` gets the client one call per answer.
 */

const gw = fakeUpstreamLabPerTest();

const QUESTION = { role: "user" as const, content: "Where are orders 42 and 43?" };

/** The chat agent's answer with one `<event>` per order (valid arguments: no repair call). */
function eventsFor(...orders: string[]) {
  const tags = orders.map((order) => `<event name="lookup_order">{"order": "${order}"}</event>`);
  return streamReply(completionStream({ text: ["Looking.", ...tags] }));
}

/** The turn's first request (dual_agent), with `settings` of its own. */
function ask(
  client: OpenAI,
  settings: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {},
): Promise<OpenAI.ChatCompletion> {
  return client.chat.completions.create({
    model: "fake",
    messages: [QUESTION],
    tools: [LOOKUP_ORDER],
    ...settings,
  });
}

/** The client's follow-up: its history, the calls it got, a reply to each. */
function followUp(
  reply: OpenAI.ChatCompletion,
  settings: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {},
): OpenAI.ChatCompletionCreateParamsNonStreaming {
  const message = reply.choices[0]?.message;
  const calls = message?.tool_calls ?? [];
  return {
    model: "fake",
    tools: [LOOKUP_ORDER],
    ...settings,
    messages: [
      QUESTION,
      { role: "assistant", content: message?.content ?? null, tool_calls: calls },
      ...calls.map((call) => ({
        role: "tool" as const,
        tool_call_id: call.id,
        content: `order ${JSON.parse((call as { function: { arguments: string } }).function.arguments).order} shipped`,
      })),
    ],
  };
}

describe("a follow-up's sampling settings in dual_agent", () => {
  it("the call that answers a follow-up is sent with that follow-up's settings, none it leaves out", async () => {
    gw.upstream.enqueue(eventsFor("42"), streamReply(completionStream({ text: ["Shipped."] })));
    const client = gw.client("dual_agent");
    const first = await ask(client, {
      temperature: 0.2,
      seed: 7,
    });
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    const second = await client.chat.completions.create(
      followUp(first, { temperature: 0.9, max_completion_tokens: 32 }),
    );
    expect(second.choices[0]?.message.content).toBe("Shipped.");
    const [opening, answering] = gw.upstream.requests.map((request) => request.body);
    expect(opening).toMatchObject({ temperature: 0.2, seed: 7 });
    expect(opening).not.toHaveProperty("max_tokens");
    expect(answering).toMatchObject({ temperature: 0.9, max_tokens: 32 });
    // Not the first request's seed: the follow-up named none, so the endpoint's own applies.
    expect(answering).not.toHaveProperty("seed");
    expect(gw.upstream.requests).toHaveLength(2);
    // Recorded with the turn, beside its first request's (turn_start).
    const id = gw.sessions()[0]?.id as string;
    await waitFor(() => gw.server.store.listTurns(id)[0]?.status === "completed");
    const rows = gw.server.store.listAuditLogs(id);
    expect(rows.find((row) => row.event === "turn_start")?.details.chat_sampling).toStrictEqual({
      temperature: 0.2,
      seed: 7,
    });
    expect(rows.filter((row) => row.event === "gateway_follow_up")).toMatchObject([
      {
        turn_index: 1,
        details: {
          chat_sampling: { temperature: 0.9, max_tokens: 32 },
          parallel_tool_calls: true,
        },
      },
    ]);
  });

  it("a follow-up the upstream refused is retried with the retry's own settings", async () => {
    gw.upstream.enqueue(
      eventsFor("42"),
      errorReply(429, "slow down"),
      streamReply(completionStream({ text: ["Shipped."] })),
    );
    const client = gw.client("dual_agent");
    const first = await ask(client);
    await expect(
      client.chat.completions.create(followUp(first, { temperature: 0.9 })),
    ).rejects.toMatchObject({ status: 429 });
    const retried = await client.chat.completions.create(
      followUp(first, { temperature: 0.3, seed: 1 }),
    );
    expect(retried.choices[0]?.message.content).toBe("Shipped.");
    const [, refused, answered] = gw.upstream.requests.map((request) => request.body);
    expect(refused).toMatchObject({ temperature: 0.9 });
    expect(answered).toMatchObject({ temperature: 0.3, seed: 1 });
  });

  it("refuses a follow-up's setting out of range (400 naming it) and takes the retry that fixes it", async () => {
    gw.upstream.enqueue(eventsFor("42"), streamReply(completionStream({ text: ["Shipped."] })));
    const client = gw.client("dual_agent");
    const first = await ask(client);
    await expect(
      client.chat.completions.create(followUp(first, { temperature: 5 })),
    ).rejects.toMatchObject({ status: 400, param: "temperature" });
    await expect(
      client.chat.completions.create(
        followUp(first, {
          parallel_tool_calls: "no" as unknown as boolean,
        }),
      ),
    ).rejects.toMatchObject({ status: 400, param: "parallel_tool_calls" });
    // Refused before the turn took the replies: the turn still waits for them.
    expect(gw.upstream.requests).toHaveLength(1);
    const fixed = await client.chat.completions.create(followUp(first, { temperature: 1.5 }));
    expect(fixed.choices[0]?.message.content).toBe("Shipped.");
    expect(gw.upstream.requests[1]?.body).toMatchObject({ temperature: 1.5 });
  });
});

describe("parallel_tool_calls: false in dual_agent", () => {
  it("the client gets the answer's first call; the model reads why the other was not run", async () => {
    gw.upstream.enqueue(
      eventsFor("42", "43"),
      streamReply(completionStream({ text: ["42 shipped; now 43."] })),
    );
    const client = gw.client("dual_agent");
    const first = await ask(client, {
      parallel_tool_calls: false,
    });
    const calls = first.choices[0]?.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    expect(
      JSON.parse((calls[0] as { function: { arguments: string } }).function.arguments),
    ).toEqual({ order: "42" });
    const second = await client.chat.completions.create(
      followUp(first, { parallel_tool_calls: false }),
    );
    expect(second.choices[0]?.message.content).toBe("42 shipped; now 43.");
    const sent = JSON.stringify(gw.upstream.requests[1]?.body);
    expect(sent).toContain("order 42 shipped");
    expect(sent).toContain("not run: the client takes one tool call at a time");
    const id = gw.sessions()[0]?.id as string;
    const { store } = gw.server;
    await waitFor(() => store.listTurns(id)[0]?.status === "completed");
    // The call the client ran ended well; the other ended as not run (the refused one ends first).
    const ends = store
      .listAuditLogs(id)
      .filter((row) => row.event === "tool_end")
      .map((row) => [row.details.event_id === calls[0]?.id, row.details.ok]);
    expect(ends).toStrictEqual([
      [false, false],
      [true, true],
    ]);
  });

  it("by default both calls of the answer go to the client", async () => {
    gw.upstream.enqueue(eventsFor("42", "43"));
    const first = await ask(gw.client("dual_agent"));
    expect(first.choices[0]?.message.tool_calls).toHaveLength(2);
  });
});
