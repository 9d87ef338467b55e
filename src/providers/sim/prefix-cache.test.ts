import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../domain/messages.js";
import { countSegmentTokens, promptSegments } from "../tokenizer.js";
import { cachedPromptTokens, commonSegmentPrefix } from "./prefix-cache.js";

describe("commonSegmentPrefix", () => {
  it("measures common prefixes of one-segment prompts", () => {
    expect(commonSegmentPrefix([[1, 2, 3]], [[1, 2, 4, 5]])).toBe(2);
    expect(commonSegmentPrefix([[1, 2]], [[1, 2, 3]])).toBe(2);
    expect(commonSegmentPrefix([[]], [[1]])).toBe(0);
    expect(commonSegmentPrefix([[9]], [[1]])).toBe(0);
  });

  it("measures common prefixes of segmented prompts as if flattened", () => {
    const shared = [1, 2, 3];
    expect(commonSegmentPrefix([shared, [4, 5]], [shared, [4, 6]])).toBe(4);
    expect(
      commonSegmentPrefix(
        [
          [1, 2],
          [3, 4],
        ],
        [[1], [2, 3, 9]],
      ),
    ).toBe(3);
    expect(commonSegmentPrefix([[], [1]], [[1], []])).toBe(1);
    expect(commonSegmentPrefix([shared], [])).toBe(0);
  });
});

describe("cachedPromptTokens", () => {
  const system = message("system", "You are a helpful assistant.");
  const tools = JSON.stringify([{ name: "mock_search", description: "Searches", parameters: {} }]);
  const firstRound = [system, message("user", "search for cats")];
  const afterTools = [
    ...firstRound,
    message("assistant", "", [
      { id: "c1", name: "mock_search", raw_arguments: '{"query":"cats"}' },
    ]),
    { ...message("tool", '{"results":[]}'), tool_call_id: "c1" },
  ];

  it("reads 0 for a request without an assistant message: a conversation's first", () => {
    expect(cachedPromptTokens(firstRound, tools)).toBe(0);
    expect(cachedPromptTokens([system], "")).toBe(0);
  });

  it("is the prefix shared with the prompt of the request that produced the last assistant message", () => {
    const previous = promptSegments(firstRound, tools);
    const current = promptSegments(afterTools, tools);
    const cached = cachedPromptTokens(afterTools, tools);
    expect(cached).toBe(commonSegmentPrefix(previous, current));
    // The previous request's messages are all shared; its tool list, which came after them, not.
    const messagesOnly = promptSegments(firstRound, "").slice(0, -1);
    expect(cached).toBeGreaterThanOrEqual(countSegmentTokens(messagesOnly));
    expect(cached).toBeLessThan(countSegmentTokens(current));
  });

  it("a next turn caches the last round of the turn before, however many rounds it had", () => {
    const nextTurn = [
      ...afterTools,
      message("assistant", "No cats found."),
      message("user", "dogs?"),
    ];
    expect(cachedPromptTokens(nextTurn, tools)).toBe(
      commonSegmentPrefix(promptSegments(afterTools, tools), promptSegments(nextTurn, tools)),
    );
    expect(cachedPromptTokens(nextTurn, tools)).toBeGreaterThan(
      cachedPromptTokens(afterTools, tools),
    );
  });

  it("depends on the request alone: equal requests give equal counts, in any order", () => {
    const nextTurn = [...afterTools, message("assistant", "Done."), message("user", "thanks")];
    const forward = [firstRound, afterTools, nextTurn].map((m) => cachedPromptTokens(m, tools));
    const backward = [nextTurn, afterTools, firstRound].map((m) => cachedPromptTokens(m, tools));
    expect(backward.reverse()).toEqual(forward);
  });
});

function message(
  role: ChatMessage["role"],
  content: string,
  calls: { id: string; name: string; raw_arguments: string }[] = [],
): ChatMessage {
  return {
    role,
    content,
    tool_calls: calls.map((call) => ({ ...call, arguments: JSON.parse(call.raw_arguments) })),
  };
}
