import { describe, expect, it } from "vitest";
import { type IntentReading, readIntents } from "./intents.js";

const reads = (text: string): IntentReading => readIntents(text);

describe("readIntents", () => {
  it.each([
    ["search for vector databases", { kind: "search", query: "vector databases" }],
    ["Search For Vector Databases.", { kind: "search", query: "Vector Databases" }],
    [
      "Could you please look up rust async runtimes?",
      { kind: "search", query: "rust async runtimes" },
    ],
    ["lookup the release notes", { kind: "search", query: "the release notes" }],
    [
      "Can you find me articles about SQLite WAL mode",
      { kind: "search", query: "SQLite WAL mode" },
    ],
    ['search for "prefix caching"', { kind: "search", query: "prefix caching" }],
    ["search the docs for streaming", { kind: "search", query: "streaming" }],
    ["search for vector databases, top 3", { kind: "search", query: "vector databases", limit: 3 }],
    ["find the top 5 results for llama.cpp", { kind: "search", query: "llama.cpp", limit: 5 }],
    ["look up hiking trails (limit 2)", { kind: "search", query: "hiking trails", limit: 2 }],
    [
      "search for tokenizers, limit to 4 results",
      { kind: "search", query: "tokenizers", limit: 4 },
    ],
    ["search for cats, top three", { kind: "search", query: "cats", limit: 3 }],
    ["search for cats, top 50", { kind: "search", query: "cats", limit: 10 }],
  ])("reads a search in %j", (text, intent) => {
    expect(reads(text)).toEqual({ intents: [intent], unclear: [] });
  });

  it.each([
    ["file a ticket about the login page crashing", { title: "the login page crashing" }],
    ["Please open a ticket for broken CSV export.", { title: "broken CSV export" }],
    ["create a ticket for flaky tests", { title: "flaky tests" }],
    ["File an URGENT ticket about the outage", { title: "the outage", priority: "high" }],
    [
      "open a high priority ticket about payment failures",
      { title: "payment failures", priority: "high" },
    ],
    [
      "file a ticket about typos in the docs, low priority",
      { title: "typos in the docs", priority: "low" },
    ],
    [
      "raise a ticket: dark mode contrast (not urgent)",
      { title: "dark mode contrast", priority: "low" },
    ],
    [
      "create a ticket titled 'Upgrade Node' with priority normal",
      { title: "Upgrade Node", priority: "normal" },
    ],
    [
      "open a new support ticket about slow search and mark it urgent",
      { title: "slow search", priority: "high" },
    ],
  ])("reads a ticket in %j", (text, expected) => {
    expect(reads(text)).toEqual({ intents: [{ kind: "ticket", ...expected }], unclear: [] });
  });

  it("reads two requests in one message, in order", () => {
    expect(reads("Search for vector databases and file a ticket about evaluating them")).toEqual({
      intents: [
        { kind: "search", query: "vector databases" },
        { kind: "ticket", title: "evaluating them" },
      ],
      unclear: [],
    });
    expect(
      reads("Open an urgent ticket about the login bug, then look up similar reports (top 2)."),
    ).toEqual({
      intents: [
        { kind: "ticket", title: "the login bug", priority: "high" },
        { kind: "search", query: "similar reports", limit: 2 },
      ],
      unclear: [],
    });
  });

  it("gives a ticket without a subject the search's subject", () => {
    expect(reads("search for memory leaks and file a ticket")).toEqual({
      intents: [
        { kind: "search", query: "memory leaks" },
        { kind: "ticket", title: "memory leaks" },
      ],
      unclear: [],
    });
  });

  it("keeps a trigger word that is part of a subject inside the subject", () => {
    expect(reads("search for how to find memory leaks")).toEqual({
      intents: [{ kind: "search", query: "how to find memory leaks" }],
      unclear: [],
    });
  });

  it.each([
    "hello",
    "what is 2+2",
    "I can't find my keys",
    "explain binary search to me",
    "thanks, that's all",
    "",
  ])("finds no request in %j", (text) => {
    expect(reads(text)).toEqual({ intents: [], unclear: [] });
  });

  it("notices requests without a subject", () => {
    expect(reads("please file a ticket")).toEqual({ intents: [], unclear: ["ticket"] });
    expect(reads("search for")).toEqual({ intents: [], unclear: ["search"] });
  });
});
