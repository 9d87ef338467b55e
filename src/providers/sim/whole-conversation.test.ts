import { describe, expect, it } from "vitest";
import { renderEventResult } from "../../domain/event-protocol.js";
import type { ChatMessage } from "../../domain/messages.js";
import type { ChatModelRequest } from "../chat-model.js";
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
  tryParseJson,
  usageOf,
  user,
} from "./test-fixtures.js";

/** Stand-ins for the built-in tools, answering as the real ones will (JSON text). */
function executeTool(name: string, rawArguments: string): string {
  const args = tryParseJson(rawArguments) as Record<string, unknown>;
  if (name === "mock_search") {
    const count = typeof args.limit === "number" ? args.limit : 2;
    const results = Array.from({ length: count }, (_, index) => ({
      id: `doc-${index + 1}`,
      title: `${String(args.query)} guide ${index + 1}`,
    }));
    return JSON.stringify({ results });
  }
  return JSON.stringify({
    id: "TCK-101",
    title: args.title,
    priority: args.priority ?? "normal",
    status: "open",
  });
}

const ASK = "Please search for vector databases, top 2, and file a ticket about choosing one";

function expectAnswerFromResults(text: string): void {
  expect(text).toContain('"vector databases guide 1" (id doc-1)');
  expect(text).toContain('"vector databases guide 2" (id doc-2)');
  expect(text).toContain('"choosing one" (id TCK-101, status open, priority normal)');
}

describe("a whole conversation with the sim model", () => {
  it("runs in chat_agent_tools style: native calls, tool messages, answer, next turn", async () => {
    const model = new SimChatModel();
    const messages: ChatMessage[] = [system(), user(ASK)];
    const request = (): ChatModelRequest => ({
      messages,
      tools: BUILTIN_DEFINITIONS,
      conversation_id: "native-session",
    });

    const round1 = await collect(model.stream(request()));
    const calls = partsOf(round1, "tool-call");
    expect(calls.map((call) => call.name)).toEqual(["mock_search", "mock_ticket"]);
    expect(finishOf(round1).finish_reason).toBe("tool_calls");
    messages.push(
      message("assistant", textOf(round1), {
        tool_calls: calls.map((call) => ({
          id: call.id,
          name: call.name,
          arguments: tryParseJson(call.raw_arguments) as Record<string, unknown>,
          raw_arguments: call.raw_arguments,
        })),
      }),
      ...calls.map((call) =>
        message("tool", executeTool(call.name, call.raw_arguments), { tool_call_id: call.id }),
      ),
    );

    const round2 = await collect(model.stream(request()));
    expect(partsOf(round2, "tool-call")).toEqual([]);
    expect(finishOf(round2).finish_reason).toBe("stop");
    expectAnswerFromResults(textOf(round2));
    expect(usageOf(round2).usage.cached_tokens).toBeGreaterThan(0);

    messages.push(message("assistant", textOf(round2)), user("Thanks! And what is 10 / 4?"));
    const turn2 = await collect(model.stream(request()));
    expect(partsOf(turn2, "tool-call")).toEqual([]);
    expect(textOf(turn2)).toBe("10 / 4 = 2.5.");
  });

  it("runs in dual_agent style: event tags, event results, answer, next turn", async () => {
    const model = new SimChatModel();
    const messages: ChatMessage[] = [catalogPrompt(), user(ASK)];
    const request = (): ChatModelRequest => ({ messages, conversation_id: "dual-session" });

    const round1 = await collect(model.stream(request()));
    const text = textOf(round1);
    const events = eventTags(text);
    expect(events.map((event) => event.name)).toEqual(["mock_search", "mock_ticket"]);
    expect(partsOf(round1, "tool-call")).toEqual([]);
    // The runtime shows the text without tags, and sends the results back as a user message.
    const results = events.map((event, index) =>
      renderEventResult({
        id: `evt-${index + 1}`,
        name: event.name,
        content: executeTool(event.name, event.raw_arguments),
      }),
    );
    messages.push(
      message("assistant", text.replace(/<event name="[^"]*">[\s\S]*?<\/event>/g, "").trim()),
      user(results.join("\n")),
    );

    const round2 = await collect(model.stream(request()));
    expect(eventTags(textOf(round2))).toEqual([]);
    expect(textOf(round2)).not.toContain("<event");
    expect(finishOf(round2).finish_reason).toBe("stop");
    expectAnswerFromResults(textOf(round2));
    expect(usageOf(round2).usage.cached_tokens).toBeGreaterThan(0);

    messages.push(message("assistant", textOf(round2)), user("now look up pgvector"));
    const turn2 = await collect(model.stream(request()));
    expect(eventTags(textOf(turn2))).toEqual([
      { name: "mock_search", raw_arguments: '{"query":"pgvector"}' },
    ]);
  });
});
