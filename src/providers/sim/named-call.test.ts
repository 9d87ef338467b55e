import { describe, expect, it } from "vitest";
import { renderEventResult } from "../../domain/event-protocol.js";
import type { ChatModelRequest, ChatToolDefinition } from "../chat-model.js";
import { readNamedCall, readNamedCalls } from "./named-call.js";
import { SimChatModel } from "./sim-chat-model.js";
import {
  BUILTIN_DEFINITIONS,
  catalogPrompt,
  collect,
  eventTags,
  finishOf,
  message,
  partsOf,
  system,
  textOf,
  user,
} from "./test-fixtures.js";

const run = (request: ChatModelRequest) => collect(new SimChatModel().stream(request));

const ECHO: ChatToolDefinition = {
  name: "everything__echo",
  description: "Echoes back the input.",
  parameters: {
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  },
};
const OFFERED = [...BUILTIN_DEFINITIONS, ECHO];
const ASK = 'call everything__echo with {"message":"hi"}';

describe("readNamedCall", () => {
  it.each([
    [ASK, "everything__echo", { message: "hi" }],
    ['use everything__echo {"message": "hi"}', "everything__echo", { message: "hi" }],
    ['Please invoke the tool `lookup_order` using {"id": 7}.', "lookup_order", { id: 7 }],
    ["call get_time", "get_time", null],
    ['run the weather tool with arguments: {"city":"Oslo"}', "weather", { city: "Oslo" }],
  ])("reads %j", (text, name, args) => {
    expect(readNamedCall(text)).toMatchObject({ kind: "call", name, arguments: args });
  });

  it("keeps the arguments as written, and reads one call per line", () => {
    expect(readNamedCall('call add with {"a": 10.0}')).toMatchObject({ written: '{"a": 10.0}' });
    expect(readNamedCalls('call add with {"a": 1}\ncall add with {"a": 2.0}\n')).toEqual([
      { kind: "call", name: "add", arguments: { a: 1 }, written: '{"a": 1}' },
      { kind: "call", name: "add", arguments: { a: 2 }, written: '{"a": 2.0}' },
    ]);
    expect(readNamedCalls('call add with {"a": 1}\nand tell me')).toBeNull();
  });

  it("names the problem of arguments that are not a JSON object", () => {
    expect(readNamedCall("call echo with {message: hi}")).toMatchObject({
      kind: "bad_arguments",
      name: "echo",
      problem: expect.stringMatching(/JSON/),
    });
    expect(readNamedCall('call echo with {"a":1} {"b":2}')?.kind).toBe("bad_arguments");
  });

  it.each([
    "search for vector databases",
    "use the search to find cats",
    "please call me when the ticket is filed",
    "file a ticket about calls with {braces}",
  ])("leaves prose alone: %j", (text) => {
    expect(readNamedCall(text)).toBeNull();
  });
});

describe("the sim calls any offered tool by name", () => {
  it("calls it natively with exactly the given arguments", async () => {
    const parts = await run({ messages: [system(), user(ASK)], tools: OFFERED });
    expect(partsOf(parts, "tool-call").map((call) => [call.name, call.raw_arguments])).toEqual([
      ["everything__echo", '{"message":"hi"}'],
    ]);
    expect(finishOf(parts).finish_reason).toBe("tool_calls");
  });

  it("in dual_agent style emits an event tag for a tool in the catalog", async () => {
    const parts = await run({ messages: [catalogPrompt(OFFERED), user(ASK)] });
    expect(partsOf(parts, "tool-call")).toEqual([]);
    expect(eventTags(textOf(parts))).toEqual([
      { name: "everything__echo", raw_arguments: '{"message":"hi"}' },
    ]);
  });

  it("without arguments fills the schema's required fields", async () => {
    const parts = await run({
      messages: [system(), user("call everything__echo")],
      tools: OFFERED,
    });
    const call = partsOf(parts, "tool-call")[0];
    expect(call?.name).toBe("everything__echo");
    expect(JSON.parse(call?.raw_arguments ?? "")).toEqual({ message: "unspecified" });
  });

  it("answers from the tool's result, in both styles", async () => {
    const call = {
      id: "call_e",
      name: "everything__echo",
      arguments: { message: "hi" },
      raw_arguments: '{"message":"hi"}',
    };
    const native = await run({
      messages: [
        system(),
        user(ASK),
        message("assistant", "", { tool_calls: [call] }),
        message("tool", "Echo: hi", { tool_call_id: "call_e" }),
      ],
      tools: OFFERED,
    });
    expect(partsOf(native, "tool-call")).toEqual([]);
    expect(textOf(native)).toContain("everything__echo returned Echo: hi");
    const events = await run({
      messages: [
        catalogPrompt(OFFERED),
        user(ASK),
        message("assistant", '<event name="everything__echo">{"message":"hi"}</event>'),
        user(renderEventResult({ id: "e1", name: "everything__echo", content: "Echo: hi" })),
      ],
    });
    expect(eventTags(textOf(events))).toEqual([]);
    expect(textOf(events)).toContain("everything__echo returned Echo: hi");
  });

  it("never calls a tool that is not offered, and says which ones are", async () => {
    const unknown = await run({
      messages: [system(), user('call everything__add with {"a":1,"b":2}')],
      tools: OFFERED,
    });
    expect(partsOf(unknown, "tool-call")).toEqual([]);
    expect(textOf(unknown)).toBe(
      "I can't call everything__add: no tool by that name is offered here. I can call mock_search, mock_ticket, everything__echo.",
    );
    const notOffered = await run({ messages: [system(), user(ASK)], tools: BUILTIN_DEFINITIONS });
    expect(partsOf(notOffered, "tool-call")).toEqual([]);
    expect(textOf(notOffered)).toMatch(/^I can't call everything__echo/);
    const noTools = await run({ messages: [system(), user(ASK)] });
    expect(textOf(noTools)).toMatch(/No tools are available to me here\.$/);
    const turnedOff = await run({
      messages: [system(), user(ASK)],
      tools: OFFERED,
      tool_choice: "none",
    });
    expect(partsOf(turnedOff, "tool-call")).toEqual([]);
    expect(textOf(turnedOff)).toBe(
      "I would call everything__echo, but tool use is turned off for this reply.",
    );
  });

  it("does not call a tool with arguments that are not JSON, and says why", async () => {
    const parts = await run({
      messages: [system(), user("call everything__echo with {message: hi}")],
      tools: OFFERED,
    });
    expect(partsOf(parts, "tool-call")).toEqual([]);
    expect(textOf(parts)).toMatch(
      /^I did not call everything__echo: its arguments are not valid JSON/,
    );
  });

  it("leaves prose naming no offered tool to the ordinary reading", async () => {
    const parts = await run({ messages: [system(), user("run the tests")], tools: OFFERED });
    expect(textOf(parts)).toMatch(/^I'm the lab's simulated model, so I have no real answer/);
  });
});

describe("the sim tells how to call a tool by name", () => {
  it("names the way to call a non-built-in tool when one is offered", async () => {
    const hello = await run({ messages: [system(), user("hello")], tools: [ECHO] });
    expect(textOf(hello)).toBe(
      `Hello! I'm the lab's simulated model. I can call everything__echo: say "call everything__echo with {…arguments as JSON…}".`,
    );
    const both = await run({ messages: [system(), user("hello")], tools: OFFERED });
    expect(textOf(both)).toMatch(
      /say "call everything__echo with \{…arguments as JSON…\}", or ask me to search for something or to file a ticket\.$/,
    );
    const builtins = await run({ messages: [system(), user("hello")], tools: BUILTIN_DEFINITIONS });
    expect(textOf(builtins)).toBe(
      "Hello! I'm the lab's simulated model. I can call mock_search, mock_ticket: ask me to search for something or to file a ticket.",
    );
  });
});
