import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../domain/messages.js";
import { countPromptTokens, MAX_EXACT_CHARS } from "../tokenizer.js";
import { ConversationWalks } from "./conversation-walk.js";
import { isEstimatedMessages } from "./message-tokens.js";
import { cachedPromptTokens } from "./prefix-cache.js";
import { message } from "./test-fixtures.js";

const TOOLS = JSON.stringify([{ name: "mock_search", description: "Searches", parameters: {} }]);

/** What the whole-prompt functions say of a request: the walk must say the same. */
function wholly(messages: readonly ChatMessage[], tools: string) {
  return {
    prompt_tokens: countPromptTokens(messages, tools),
    cached_tokens: cachedPromptTokens(messages, tools),
    estimated: isEstimatedMessages(messages, tools),
    json: JSON.stringify(messages),
  };
}

function walked(
  walks: ConversationWalks,
  id: string | undefined,
  messages: ChatMessage[],
  tools = TOOLS,
) {
  const figures = walks.figures(id, messages, tools);
  return {
    prompt_tokens: figures.prompt_tokens,
    cached_tokens: figures.cached_tokens,
    estimated: figures.estimated,
    json: figures.json_parts.join(""),
  };
}

/** A tool round of the runtime's shape, its system message built anew as the runtime does. */
function round(history: ChatMessage[], turn: number): ChatMessage[] {
  const user = message("user", `search for cats ${turn}`);
  const query = { query: `cats ${turn}` };
  const call = message("assistant", "", {
    tool_calls: [
      {
        id: `c${turn}`,
        name: "mock_search",
        arguments: query,
        raw_arguments: JSON.stringify(query),
      },
    ],
  });
  const result = message("tool", '{"results":[]}', { tool_call_id: `c${turn}` });
  const answer = message("assistant", `Found nothing on cats ${turn}.`);
  return [...history, user, call, result, answer];
}

describe("the sim's conversation walks", () => {
  it("give the whole-prompt figures at every request of a growing conversation", () => {
    const walks = new ConversationWalks();
    let history: ChatMessage[] = [];
    for (let turn = 1; turn <= 12; turn++) {
      const next = round(history, turn);
      // Each request as the runtime sends it: a fresh system message, the history, the new part.
      for (const end of [history.length + 1, history.length + 3, next.length]) {
        const request = [message("system", "You help."), ...next.slice(0, end)];
        expect(walked(walks, "s1", request)).toEqual(wholly(request, TOOLS));
      }
      history = next;
    }
    // The prompt cache is seen: the last request caches all but its newest messages.
    const request = [message("system", "You help."), ...history];
    expect(walked(walks, "s1", request).cached_tokens).toBeGreaterThan(0);
  });

  it("follow a history that is cut back, edited or changes its tools, as a fresh walk would", () => {
    const walks = new ConversationWalks();
    let history: ChatMessage[] = [message("system", "You help.")];
    for (let turn = 1; turn <= 5; turn++) history = round(history, turn);
    expect(walked(walks, "s2", history)).toEqual(wholly(history, TOOLS));
    const cut = history.slice(0, 7);
    expect(walked(walks, "s2", cut)).toEqual(wholly(cut, TOOLS));
    // The same position, other content: a message of equal role but other text is not the same.
    const edited = [...cut.slice(0, 5), message("user", "search for dogs"), ...cut.slice(6)];
    expect(walked(walks, "s2", edited)).toEqual(wholly(edited, TOOLS));
    expect(walked(walks, "s2", edited, "")).toEqual(wholly(edited, ""));
    // An early message replaced by an edited copy: the walk restarts there.
    const copy = [...edited];
    copy[1] = { ...(copy[1] as ChatMessage), content: "search for birds" };
    expect(walked(walks, "s2", copy)).toEqual(wholly(copy, TOOLS));
  });

  it("keep conversations apart, and walk a request without an id whole", () => {
    const walks = new ConversationWalks();
    const long = round(round([message("system", "You help.")], 1), 2);
    const other = round([message("system", "You answer briefly.")], 7);
    expect(walked(walks, "a", long)).toEqual(wholly(long, TOOLS));
    expect(walked(walks, "b", other)).toEqual(wholly(other, TOOLS));
    expect(walked(walks, "a", long)).toEqual(wholly(long, TOOLS));
    expect(walked(walks, undefined, other)).toEqual(wholly(other, TOOLS));
    expect(walked(walks, "a", [])).toEqual(wholly([], TOOLS));
  });

  it("count a message past the tokenizer's exact limit as estimated, until it leaves", () => {
    const walks = new ConversationWalks();
    const history = round([message("system", "You help.")], 1);
    const huge = message("tool", "x ".repeat(MAX_EXACT_CHARS), { tool_call_id: "c1" });
    const withHuge = [...history.slice(0, 3), huge];
    expect(walked(walks, "e", withHuge).estimated).toBe(true);
    expect(walked(walks, "e", withHuge)).toEqual(wholly(withHuge, TOOLS));
    expect(walked(walks, "e", history).estimated).toBe(false);
  });
});
