import { describe, expect, it } from "vitest";
import type { ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { SimChatModel } from "./sim-chat-model.js";
import {
  BUILTIN_DEFINITIONS,
  catalogPrompt,
  collect,
  finishOf,
  message,
  partsOf,
  system,
  textOf,
  user,
} from "./test-fixtures.js";

const run = (request: ChatModelRequest) => collect(new SimChatModel().stream(request));

describe("SimChatModel answering tool results", () => {
  const searchCall = {
    id: "call_s",
    name: "mock_search",
    arguments: { query: "cats" },
    raw_arguments: '{"query":"cats"}',
  };
  const ticketCall = {
    id: "call_t",
    name: "mock_ticket",
    arguments: { title: "cats" },
    raw_arguments: '{"title":"cats"}',
  };
  const nativeHistory = (searchResult: string, ticketResult: string) => [
    system(),
    user("search for cats and file a ticket about cats"),
    message("assistant", "", { tool_calls: [searchCall, ticketCall] }),
    message("tool", searchResult, { tool_call_id: "call_s" }),
    message("tool", ticketResult, { tool_call_id: "call_t" }),
  ];
  const noToolCalls = (parts: ChatModelPart[]) => {
    expect(partsOf(parts, "tool-call")).toEqual([]);
    expect(textOf(parts)).not.toContain("<event");
    expect(finishOf(parts).finish_reason).toBe("stop");
  };

  it("answers from the results instead of calling the tools again", async () => {
    const parts = await run({
      messages: nativeHistory(
        JSON.stringify({ results: [{ id: "doc-7", title: "Caring for cats" }] }),
        JSON.stringify({ id: "TCK-12", title: "cats", priority: "normal", status: "open" }),
      ),
      tools: BUILTIN_DEFINITIONS,
    });
    noToolCalls(parts);
    const text = textOf(parts);
    expect(text).toContain('mock_search found 1 result: "Caring for cats" (id doc-7)');
    expect(text).toContain("mock_ticket returned");
    expect(text).toContain("TCK-12");
  });

  it("says so when a tool failed, without retrying", async () => {
    const parts = await run({
      messages: nativeHistory(
        JSON.stringify({ error: "search backend timed out" }),
        JSON.stringify({ error: "arguments invalid: title is required" }),
      ),
      tools: BUILTIN_DEFINITIONS,
    });
    noToolCalls(parts);
    expect(textOf(parts)).toContain("mock_search failed: search backend timed out");
    expect(textOf(parts)).toContain("mock_ticket failed: arguments invalid");
    expect(textOf(parts)).toContain("did not retry");
  });

  it("reads <event_result> blocks in dual_agent style", async () => {
    const results =
      '<event_result id="e1" name="mock_search">{"results":[{"id":"doc-1","title":"Cat facts"},{"id":"doc-2","title":"Cat care"}]}</event_result>\n' +
      '<event_result id="e2" name="mock_ticket">{"error":"tracker unavailable"}</event_result>';
    const parts = await run({
      messages: [
        catalogPrompt(),
        user("search for cats and file a ticket about cats"),
        message("assistant", "Let me search for that."),
        user(results),
      ],
    });
    noToolCalls(parts);
    const text = textOf(parts);
    expect(text).toContain('"Cat facts" (id doc-1); "Cat care" (id doc-2)');
    expect(text).toContain("mock_ticket failed: tracker unavailable");
  });

  it("quotes results that are not JSON", async () => {
    const parts = await run({
      messages: nativeHistory("plain text result", "ok"),
      tools: BUILTIN_DEFINITIONS,
    });
    expect(textOf(parts)).toContain("mock_search returned plain text result");
  });
});
