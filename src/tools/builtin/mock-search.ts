import type { Tool } from "../tool.js";
import { latencyOption, simulateLatency, slugOf, stableHash, stringArgument } from "./support.js";

/**
 * `mock_search`: a pretend web/document search. The same query always gives the same results
 * (ids, titles, urls and snippets derived from the query), so runs can be compared.
 */

export const MOCK_SEARCH_NAME = "mock_search";
export const MOCK_SEARCH_DEFAULT_LIMIT = 3;
export const MOCK_SEARCH_MAX_LIMIT = 10;

export interface MockSearchResult {
  id: string;
  title: string;
  url: string;
  snippet: string;
}

export interface MockSearchOutput {
  query: string;
  results: MockSearchResult[];
}

export interface MockSearchOptions {
  /** Artificial latency of every call in milliseconds (default 0); the call's signal cuts it short. */
  latency_ms?: number;
}

const KINDS: readonly { title: (topic: string) => string; snippet: (topic: string) => string }[] = [
  {
    title: (topic) => `${topic}: an overview`,
    snippet: (topic) =>
      `An overview of ${topic}: the key ideas, common pitfalls and where to start.`,
  },
  {
    title: (topic) => `A practical guide to ${topic}`,
    snippet: (topic) => `A step-by-step guide to ${topic}, with worked examples you can adapt.`,
  },
  {
    title: (topic) => `${topic}: frequently asked questions`,
    snippet: (topic) => `Answers to the questions people ask most often about ${topic}.`,
  },
  {
    title: (topic) => `${topic} reference`,
    snippet: (topic) => `Reference notes on ${topic}: options, defaults and their trade-offs.`,
  },
  {
    title: (topic) => `${topic} in production: a case study`,
    snippet: (topic) => `How one team applied ${topic} in production, and what they measured.`,
  },
];

export function createMockSearchTool(options: MockSearchOptions = {}): Tool {
  const latencyMs = latencyOption(options.latency_ms, MOCK_SEARCH_NAME);
  return {
    name: MOCK_SEARCH_NAME,
    description:
      "Search the web and documentation for a query and return the best matching results, each " +
      "with an id, title, url and snippet. Use it to look up facts, documentation or sources " +
      "before answering.",
    parameters: {
      type: "object",
      properties: {
        query: {
          type: "string",
          minLength: 1,
          description: "What to search for, in a few keywords or a short question.",
        },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: MOCK_SEARCH_MAX_LIMIT,
          description: `How many results to return, 1 to ${MOCK_SEARCH_MAX_LIMIT} (default ${MOCK_SEARCH_DEFAULT_LIMIT}).`,
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    async execute(args, { signal }) {
      const query = stringArgument(args, "query");
      const limit = limitOf(args.limit);
      await simulateLatency(latencyMs, signal);
      return mockSearch(query, limit);
    },
  };
}

/** The results `mock_search` returns for `query`: a pure function of its arguments. */
export function mockSearch(query: string, limit = MOCK_SEARCH_DEFAULT_LIMIT): MockSearchOutput {
  const normalized = query.trim().replace(/\s+/g, " ");
  const hash = stableHash(normalized.toLowerCase());
  const slug = slugOf(normalized);
  const topic = shorten(normalized || query, 80);
  const offset = Number.parseInt(hash.slice(0, 4), 16) % KINDS.length;
  const results: MockSearchResult[] = [];
  for (let rank = 1; rank <= limit; rank++) {
    const kind = KINDS[(offset + rank - 1) % KINDS.length] ?? KINDS[0];
    if (kind === undefined) break;
    results.push({
      id: `doc-${hash}-${rank}`,
      title: kind.title(topic),
      url: `https://example.com/docs/${slug}-${hash}/${rank}`,
      snippet: kind.snippet(topic),
    });
  }
  return { query, results };
}

function limitOf(value: unknown): number {
  if (value === undefined) return MOCK_SEARCH_DEFAULT_LIMIT;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new Error("limit: must be an integer");
  }
  return Math.min(MOCK_SEARCH_MAX_LIMIT, Math.max(1, value));
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
