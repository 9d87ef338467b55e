import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../domain/messages.js";
import { countPromptTokens, MAX_EXACT_CHARS } from "../tokenizer.js";
import { ConversationWalks } from "./conversation-walk.js";
import { isEstimatedMessages } from "./message-tokens.js";
import { cachedPromptTokens } from "./prefix-cache.js";
import { SeededRandom } from "./seeded-random.js";
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

  it("give the whole-prompt figures for random requests: grown, cut, edited, copied, interleaved", () => {
    const walks = new ConversationWalks();
    const random = new SeededRandom(7);
    const texts = ["", "hi", "<|assistant|>", "search for cats", "x ".repeat(40), "ünïcode ✓"];
    const pick = <Item>(items: readonly Item[]) =>
      items[random.integer(0, items.length - 1)] as Item;
    const someMessage = (turn: number): ChatMessage => {
      const role = pick(["system", "user", "assistant", "tool"] as const);
      if (role === "assistant" && random.next() < 0.5) {
        const args = { query: pick(texts) };
        return message("assistant", pick(texts), {
          tool_calls: [
            {
              id: `c${turn}`,
              name: "mock_search",
              arguments: args,
              raw_arguments: JSON.stringify(args),
            },
          ],
          ...(random.next() < 0.2 ? { refusal: "no" } : {}),
        });
      }
      if (role === "tool")
        return message("tool", pick(texts), { tool_call_id: `c${turn}`, name: "mock_search" });
      return message(role, pick(texts));
    };
    const conversations = new Map<string, ChatMessage[]>();
    for (let request = 0; request < 300; request++) {
      const id = pick(["a", "b", "c", undefined]);
      let messages = [...(conversations.get(id ?? "") ?? [])];
      const change = random.next();
      if (change < 0.6) {
        for (let added = random.integer(1, 3); added > 0; added--)
          messages.push(someMessage(request));
      } else if (change < 0.75) {
        messages = messages.slice(0, random.integer(0, messages.length));
      } else if (change < 0.9 && messages.length > 0) {
        // An equal copy (the runtime's system message) or an edited one, anywhere.
        const at = random.integer(0, messages.length - 1);
        const copy = { ...(messages[at] as ChatMessage) };
        // Edited in one field the prompt shows, content or not (a copy's JSON tells them apart).
        const edit = random.next();
        if (edit < 0.25) copy.content = pick(texts);
        else if (edit < 0.4) copy.name = pick(["mock_search", "other"]);
        else if (edit < 0.55) copy.tool_calls = [];
        messages[at] = copy;
      }
      const tools = pick([TOOLS, "", '[{"name":"other"}]']);
      if (id !== undefined) conversations.set(id, messages);
      expect(walked(walks, id, messages, tools), `request ${request}`).toEqual(
        wholly(messages, tools),
      );
    }
  });

  it("forget the least recently used conversations past 64, and walk a forgotten one again right", () => {
    const walks = new ConversationWalks();
    const history = round([message("system", "You help.")], 1);
    for (let conversation = 0; conversation < 70; conversation++) {
      expect(walked(walks, `s${conversation}`, history)).toEqual(wholly(history, TOOLS));
    }
    const grown = round(history, 2);
    // s0 was forgotten (walked from nothing), s69 is kept (walked from where it was): both right.
    expect(walked(walks, "s0", grown)).toEqual(wholly(grown, TOOLS));
    expect(walked(walks, "s69", grown)).toEqual(wholly(grown, TOOLS));
  });
});
