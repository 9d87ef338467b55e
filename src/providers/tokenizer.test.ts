import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  countPromptTokens,
  countTokens,
  estimateTokensFromBytes,
  isEstimatedPrompt,
  MAX_EXACT_CHARS,
  MAX_RUN_CHARS,
  promptTokens,
  tokenize,
  truncateToTokens,
} from "./tokenizer.js";

describe("tokenizer bounds", () => {
  it("counts a 300,000-character string without spaces by the byte estimate", () => {
    const text = "x".repeat(300_000);
    expect(countTokens(text)).toBe(75_000);
    expect(countTokens(text)).toBe(estimateTokensFromBytes(text));
    // The stand-in tokens number the same, so a prompt's length is its count.
    expect(tokenize(text)).toHaveLength(75_000);
    const multiByte = "é".repeat(MAX_EXACT_CHARS + 2); // 2 UTF-8 bytes each
    expect(countTokens(multiByte)).toBe((MAX_EXACT_CHARS + 2) / 2);
  });

  it("encodes a long run without spaces in pieces of MAX_RUN_CHARS characters", () => {
    let seed = 7;
    const letter = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return String.fromCharCode(97 + (seed % 26));
    };
    const run = Array.from({ length: MAX_EXACT_CHARS }, letter).join("");
    let piecewise = 0;
    for (let start = 0; start < run.length; start += MAX_RUN_CHARS) {
      piecewise += encode(run.slice(start, start + MAX_RUN_CHARS)).length;
    }
    expect(countTokens(run)).toBe(piecewise);
  });

  it("counts ordinary text exactly, as the whole string's encoding", () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(300);
    expect(countTokens(prose)).toBe(encode(prose).length);
    expect(tokenize(prose)).toEqual(encode(prose));
  });

  it("says when a prompt holds an estimated text", () => {
    const short = [{ role: "user" as const, content: "hello", tool_calls: [] }];
    const long = [
      { role: "user" as const, content: "y".repeat(MAX_EXACT_CHARS + 1), tool_calls: [] },
    ];
    expect(isEstimatedPrompt(short)).toBe(false);
    expect(isEstimatedPrompt(long)).toBe(true);
    expect(promptTokens(long).length - promptTokens([]).length).toBeGreaterThan(
      estimateTokensFromBytes(long[0]?.content ?? ""),
    );
  });

  it("counts a prompt as long as its token sequence, without building it", () => {
    const messages = [
      { role: "system" as const, content: "Be brief.", tool_calls: [] },
      {
        role: "assistant" as const,
        content: "",
        tool_calls: [
          {
            id: "call_1",
            name: "mock_search",
            arguments: { query: "cats" },
            raw_arguments: '{"query":"cats"}',
          },
        ],
      },
      {
        role: "tool" as const,
        content: "z".repeat(MAX_EXACT_CHARS + 3),
        tool_call_id: "call_1",
        tool_calls: [],
      },
    ];
    const tools = JSON.stringify([{ name: "mock_search" }]);
    expect(countPromptTokens(messages, tools)).toBe(promptTokens(messages, tools).length);
    expect(countPromptTokens([])).toBe(promptTokens([]).length);
  });

  it("counts an answerless refusal as the content it is sent as, and never the reasoning", () => {
    const refusal = "I can't help with that request.";
    const refused = [{ role: "assistant" as const, content: "", refusal, tool_calls: [] }];
    const sentAs = [{ role: "assistant" as const, content: refusal, tool_calls: [] }];
    expect(countPromptTokens(refused)).toBe(countPromptTokens(sentAs));
    const thought = [
      { role: "assistant" as const, content: "Yes.", reasoning: "long thoughts", tool_calls: [] },
    ];
    const plain = [{ role: "assistant" as const, content: "Yes.", tool_calls: [] }];
    expect(countPromptTokens(thought)).toBe(countPromptTokens(plain));
  });

  it("truncates to a token budget on both paths", () => {
    const prose = "one two three four five six seven eight";
    const cut = truncateToTokens(prose, 3);
    expect(countTokens(cut)).toBe(3);
    expect(prose.startsWith(cut)).toBe(true);
    const huge = "z".repeat(MAX_EXACT_CHARS * 2);
    expect(truncateToTokens(huge, 10)).toBe("z".repeat(40));
  });
});
