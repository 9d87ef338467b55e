import { describe, expect, it } from "vitest";
import { ChatMessage } from "../../domain/messages.js";
import { renderMessage, renderRequestBody } from "./request-body.js";

const user = ChatMessage.parse({ role: "user", content: "hi" });

describe("renderRequestBody", () => {
  it("sends only what the request sets, always streaming with usage", () => {
    expect(renderRequestBody("m", { messages: [user] })).toEqual({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("renders tool choices and response formats in the wire shape", () => {
    const tools = [{ name: "f", description: "d", parameters: { type: "object" } }];
    for (const [choice, wire] of [
      ["auto", "auto"],
      ["none", "none"],
      ["required", "required"],
      [{ name: "f" }, { type: "function", function: { name: "f" } }],
    ] as const) {
      expect(
        renderRequestBody("m", { messages: [user], tools, tool_choice: choice }).tool_choice,
      ).toEqual(wire);
    }
    expect(
      renderRequestBody("m", { messages: [user], response_format: { type: "json_object" } })
        .response_format,
    ).toEqual({ type: "json_object" });
    expect(
      renderRequestBody("m", {
        messages: [user],
        response_format: { type: "json_schema", name: "args", schema: { type: "object" } },
      }).response_format,
    ).toEqual({ type: "json_schema", json_schema: { name: "args", schema: { type: "object" } } });
  });

  it("leaves out empty tools and a tool choice without tools, which OpenAI refuses", () => {
    const body = renderRequestBody("m", { messages: [user], tools: [], tool_choice: "auto" });
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("tool_choice");
  });
});

describe("renderMessage", () => {
  it("sends assistant tool calls with the model's raw argument text, and omits empty ones", () => {
    const assistant = ChatMessage.parse({
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", name: "f", arguments: { a: 1 }, raw_arguments: '{ "a" : 1 }' }],
    });
    expect(renderMessage(assistant)).toEqual({
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "f", arguments: '{ "a" : 1 }' } },
      ],
    });
    expect(renderMessage(ChatMessage.parse({ role: "assistant", content: "done" }))).toEqual({
      role: "assistant",
      content: "done",
    });
    expect(
      renderMessage(ChatMessage.parse({ role: "tool", content: "42", tool_call_id: "c1" })),
    ).toEqual({
      role: "tool",
      content: "42",
      tool_call_id: "c1",
    });
  });
});

describe("renderMessage: reasoning and refusals", () => {
  const thinking = ChatMessage.parse({
    role: "assistant",
    content: "",
    reasoning: "I should search first.",
    tool_calls: [{ id: "c1", name: "f", arguments: {}, raw_arguments: "{}" }],
  });

  it("never sends reasoning unless the endpoint is configured to want it back", () => {
    expect(renderMessage(thinking)).not.toHaveProperty("reasoning_content");
    expect(renderMessage(thinking)).not.toHaveProperty("reasoning");
    expect(renderMessage(thinking, { send_reasoning: false })).not.toHaveProperty("reasoning");
  });

  it("sends an assistant's reasoning in the configured field (DeepSeek: reasoning_content)", () => {
    expect(renderMessage(thinking, { send_reasoning: "reasoning_content" })).toMatchObject({
      role: "assistant",
      content: "",
      reasoning_content: "I should search first.",
    });
    const body = renderRequestBody(
      "m",
      { messages: [user, thinking] },
      { send_reasoning: "reasoning" },
    );
    expect(body.messages[1]).toMatchObject({ reasoning: "I should search first." });
    expect(body.messages[1]).not.toHaveProperty("reasoning_content");
    // Only assistants think; a user message carries no such field.
    expect(body.messages[0]).toEqual({ role: "user", content: "hi" });
  });

  it("sends an answerless refusal as the content, so strict endpoints accept the history", () => {
    const refused = ChatMessage.parse({ role: "assistant", content: "", refusal: "I can't help." });
    expect(renderMessage(refused)).toEqual({ role: "assistant", content: "I can't help." });
    const both = ChatMessage.parse({ role: "assistant", content: "Partly:", refusal: "no more" });
    expect(renderMessage(both)).toEqual({ role: "assistant", content: "Partly:" });
  });
});
