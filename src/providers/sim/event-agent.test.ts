import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../domain/errors.js";
import type { ChatModelRequest } from "../chat-model.js";
import { SimChatModel } from "./sim-chat-model.js";
import {
  BUILTIN_DEFINITIONS,
  collect,
  finishOf,
  message,
  partsOf,
  SEARCH_DEFINITION,
  system,
  TICKET_DEFINITION,
  textOf,
  user,
} from "./test-fixtures.js";

/** A fallback request as the dual_agent runtime might phrase it: the conversation, then the ask. */
const conversation = [
  system("You are a helpful assistant."),
  user("Search for SQLite WAL mode, top 2, and open an urgent ticket about enabling it"),
  message("assistant", 'Let me search. <event name="mock_search">{"q":"SQLite WAL mode"}</event>'),
];
const fallbackAsk = (tool: string) =>
  user(`The arguments of the ${tool} event were invalid: query is required. Reply with JSON only.`);

const run = (request: ChatModelRequest, model = new SimChatModel()) =>
  collect(model.stream(request));

describe("SimChatModel as an event agent", () => {
  it("answers a json_schema response_format with the tool's arguments as bare JSON", async () => {
    for (const [definition, expected] of [
      [SEARCH_DEFINITION, { query: "SQLite WAL mode", limit: 2 }],
      [TICKET_DEFINITION, { title: "enabling it", priority: "high" }],
    ] as const) {
      const parts = await run({
        messages: [...conversation, fallbackAsk(definition.name)],
        response_format: {
          type: "json_schema",
          name: `${definition.name}_arguments`,
          schema: definition.parameters,
          strict: true,
        },
      });
      expect(JSON.parse(textOf(parts))).toEqual(expected);
      expect(textOf(parts)).not.toContain("<event");
      expect(partsOf(parts, "tool-call")).toEqual([]);
      expect(finishOf(parts).finish_reason).toBe("stop");
    }
  });

  it("repairs each of two searches asked together from the arguments the refused call holds", async () => {
    const repair = (written: string) =>
      run({
        messages: [
          system(
            `You write arguments for one tool call.\nThe assistant wrote these arguments: ${written}\nThey were refused: query is required`,
          ),
          user("search for vector databases, then search for bm25 ranking"),
        ],
        response_format: {
          type: "json_schema",
          name: SEARCH_DEFINITION.name,
          schema: SEARCH_DEFINITION.parameters,
        },
      });
    expect(JSON.parse(textOf(await repair('{"q":"bm25 ranking"}')))).toMatchObject({
      query: "bm25 ranking",
    });
    expect(JSON.parse(textOf(await repair('{\n  "q": "vector databases"\n}')))).toMatchObject({
      query: "vector databases",
    });
    // Arguments that name neither (or are not JSON): the first thing asked, as before.
    expect(JSON.parse(textOf(await repair("{q: bm25")))).toMatchObject({
      query: "vector databases",
    });
  });

  it("finds the tool by the schema's shape when the format's name does not say", async () => {
    const parts = await run({
      messages: [...conversation, user("Fix the arguments.")],
      response_format: {
        type: "json_schema",
        name: "arguments",
        schema: TICKET_DEFINITION.parameters,
      },
    });
    expect(JSON.parse(textOf(parts))).toEqual({ title: "enabling it", priority: "high" });
  });

  it("satisfies the required fields of an unknown tool's schema from the user's request", async () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer", minimum: 1, maximum: 7 },
        units: { type: "string", enum: ["metric", "imperial"] },
      },
      required: ["city", "days", "units"],
      additionalProperties: false,
    };
    const parts = await run({
      messages: [user("look up the forecast for Lisbon")],
      response_format: { type: "json_schema", name: "weather_arguments", schema },
    });
    const args = JSON.parse(textOf(parts));
    expect(args).toEqual({ city: "the forecast for Lisbon", days: 1, units: "metric" });
  });

  it("answers json_object with the arguments of the tool the request mentions", async () => {
    const parts = await run({
      messages: [...conversation, fallbackAsk("mock_ticket")],
      response_format: { type: "json_object" },
    });
    expect(JSON.parse(textOf(parts))).toEqual({ title: "enabling it", priority: "high" });
  });

  it("reads the intent from a fallback prompt that quotes the conversation", async () => {
    const parts = await run({
      messages: [
        system("You write JSON arguments for tools."),
        user(
          "Tool: mock_search\nConversation:\nuser: please look up prefix caching (limit 4)\nWrite the arguments.",
        ),
      ],
      response_format: {
        type: "json_schema",
        name: "mock_search",
        schema: SEARCH_DEFINITION.parameters,
      },
    });
    expect(JSON.parse(textOf(parts))).toEqual({ query: "prefix caching", limit: 4 });
  });

  it("answers a forced tool_choice with one well-formed call of that tool", async () => {
    // Even a model that always malforms its own calls gets forced calls right.
    const model = new SimChatModel({ options: { malformed_arguments_rate: 1 } });
    const parts = await run(
      {
        messages: [...conversation, fallbackAsk("mock_search")],
        tools: BUILTIN_DEFINITIONS,
        tool_choice: { name: "mock_search" },
      },
      model,
    );
    const calls = partsOf(parts, "tool-call");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.name).toBe("mock_search");
    expect(JSON.parse(calls[0]?.raw_arguments ?? "")).toEqual({
      query: "SQLite WAL mode",
      limit: 2,
    });
    expect(textOf(parts)).toBe("");
    expect(finishOf(parts).finish_reason).toBe("tool_calls");
  });

  it("refuses to force a tool the request does not offer, as an endpoint would", async () => {
    await expect(
      run({
        messages: [user("search for cats")],
        tools: [TICKET_DEFINITION],
        tool_choice: { name: "mock_search" },
      }),
    ).rejects.toThrow(InvalidInputError);
  });
});
