import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../domain/messages.js";
import { isEstimatedPrompt, MAX_EXACT_CHARS, promptSegments } from "../tokenizer.js";
import { isEstimatedMessages, messageSegments, messagesJsonParts } from "./message-tokens.js";
import { digest, digestParts, NATIVE_PREHASH_CHARS } from "./seeded-random.js";

const history = (): ChatMessage[] => [
  { role: "system", content: "You help.", tool_calls: [] },
  { role: "user", content: "search for sqlite wal mode", tool_calls: [] },
  {
    role: "assistant",
    content: "",
    reasoning: "a search will do",
    tool_calls: [
      {
        id: "c1",
        name: "mock_search",
        arguments: { query: "wal" },
        raw_arguments: '{"query":"wal"}',
      },
    ],
  },
  {
    role: "tool",
    content: '{"results":[]}',
    name: "mock_search",
    tool_call_id: "c1",
    tool_calls: [],
  },
  { role: "assistant", content: "", refusal: "I cannot.", tool_calls: [] },
];
const TOOLS = '[{"name":"mock_search"}]';

describe("the sim's per-message prompt cache", () => {
  it("gives the tokenizer's own segments, estimate flag and JSON, with and without tools", () => {
    const messages = history();
    for (const tools of [TOOLS, ""]) {
      expect(messageSegments(messages, tools)).toEqual(promptSegments(messages, tools));
      expect(isEstimatedMessages(messages, tools)).toBe(isEstimatedPrompt(messages, tools));
    }
    expect(messagesJsonParts(messages).join("")).toBe(JSON.stringify(messages));
    expect(messagesJsonParts([]).join("")).toBe("[]");
    // Hashed part by part, a long request digests as its whole text does.
    const wide = ["[", "x".repeat(NATIVE_PREHASH_CHARS), ",", "y".repeat(10), "]"];
    expect(digestParts(wide)).toBe(digest(wide.join("")));
    expect(digestParts(["[", "short", "]"])).toBe(digest("[short]"));
    const long: ChatMessage = {
      role: "tool",
      content: "x ".repeat(MAX_EXACT_CHARS),
      tool_calls: [],
    };
    expect(isEstimatedMessages([...messages, long], "")).toBe(true);
  });

  it("tokenizes a message once: the same history's next call reuses each message's segments", () => {
    const messages = history();
    const first = messageSegments(messages, TOOLS);
    const grown = [...messages, { role: "user" as const, content: "thanks", tool_calls: [] }];
    const second = messageSegments(grown, TOOLS);
    // The very same arrays for the messages seen before (not equal copies): nothing re-read.
    first.slice(1, -1).forEach((segment, index) => {
      expect(second[index + 1]).toBe(segment);
    });
    expect(second).toEqual(promptSegments(grown, TOOLS));
  });
});
