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
