import { describe, expect, it } from "vitest";
import {
  ArgumentMatcher,
  type TurnExpectation,
  TurnExpectation as TurnExpectationSchema,
  type TurnFacts,
} from "../domain/experiment.js";
import { matchArgument } from "../domain/match-argument.js";
import { scoreRun } from "./score.js";

type Call = TurnFacts["tool_calls"][number];

function facts(overrides: Partial<TurnFacts> = {}): TurnFacts {
  return {
    status: "completed",
    answer: "",
    rounds: 1,
    tool_calls: [],
    ttft_ms: 5,
    wall_time_ms: 20,
    prompt_tokens: 100,
    cached_tokens: 0,
    completion_tokens: 10,
    total_tokens: 110,
    fallback_count: 0,
    tool_count: 0,
    ...overrides,
  };
}

const call = (name: string, args: Record<string, unknown> = {}): Call => ({
  name,
  arguments: args,
  ok: true,
  used_fallback: false,
});

const expectation = (input: unknown): TurnExpectation => TurnExpectationSchema.parse(input);
const matcher = (input: unknown): ArgumentMatcher => ArgumentMatcher.parse(input);

describe("matchArgument", () => {
  it("equals: deep and exact; a bare value means equals", () => {
    expect(matchArgument(matcher(5), 5)).toBe(true);
    expect(matchArgument(matcher(5), "5")).toBe(false);
    expect(matchArgument(matcher("high"), "High")).toBe(false);
    expect(matchArgument(matcher({ equals: { a: [1, { b: 2 }] } }), { a: [1, { b: 2 }] })).toBe(
      true,
    );
    expect(matchArgument(matcher({ a: 1, b: 2 }), { b: 2, a: 1 })).toBe(true);
    expect(matchArgument(matcher({ a: 1 }), { a: 1, b: 2 })).toBe(false);
    expect(matchArgument(matcher(null), undefined)).toBe(false);
    expect(matchArgument(matcher(null), null)).toBe(true);
  });

  it("contains: a case-insensitive substring of a string", () => {
    expect(matchArgument(matcher({ contains: "SQLite" }), "sqlite wal mode")).toBe(true);
    expect(matchArgument(matcher({ contains: "wal" }), "SQLite WAL")).toBe(true);
    expect(matchArgument(matcher({ contains: "postgres" }), "sqlite")).toBe(false);
    expect(matchArgument(matcher({ contains: "5" }), 5)).toBe(false);
    expect(matchArgument(matcher({ contains: "x" }), undefined)).toBe(false);
  });

  it("regex: a string the pattern matches", () => {
    expect(matchArgument(matcher({ regex: "^sqlite\\b" }), "sqlite wal")).toBe(true);
    expect(matchArgument(matcher({ regex: "^wal" }), "sqlite wal")).toBe(false);
    expect(matchArgument(matcher({ regex: "\\d" }), 5)).toBe(false);
    expect(matchArgument(matcher({ regex: "(" }), "(")).toBe(false);
  });

  it("any: present, whatever the value", () => {
    expect(matchArgument(matcher({ any: true }), "")).toBe(true);
    expect(matchArgument(matcher({ any: true }), null)).toBe(true);
    expect(matchArgument(matcher({ any: true }), undefined)).toBe(false);
  });
});

describe("scoreRun", () => {
  const search = expectation({
    tools: [{ name: "mock_search", arguments: { query: { contains: "sqlite" } } }],
  });

  it("a right call with matching arguments succeeds with full marks", () => {
    const score = scoreRun(
      [search],
      [facts({ rounds: 2, tool_calls: [call("mock_search", { query: "SQLite WAL" })] })],
    );
    expect(score).toEqual({
      tool_precision: 1,
      tool_recall: 1,
      argument_match: 1,
      irrelevance: null,
      answer: null,
      success: true,
      failures: [],
    });
  });

  it("the wrong tool scores 0 for that expectation", () => {
    const score = scoreRun(
      [search],
      [facts({ tool_calls: [call("mock_ticket", { title: "sqlite" })] })],
    );
    expect(score).toMatchObject({
      tool_precision: 0,
      tool_recall: 0,
      argument_match: 0,
      success: false,
      failures: ["turn 1: expected mock_search, called mock_ticket"],
    });
    expect(scoreRun([search], [facts()]).failures).toEqual([
      "turn 1: expected mock_search, called no tool",
    ]);
  });

  it("a wrong argument scores 0 for argument_match and says what differed", () => {
    const score = scoreRun(
      [search],
      [facts({ tool_calls: [call("mock_search", { query: "postgres" })] })],
    );
    expect(score).toMatchObject({
      tool_precision: 1,
      tool_recall: 1,
      argument_match: 0,
      success: false,
      failures: [
        'turn 1: mock_search call 1: arguments did not match: query: expected a string containing "sqlite", got "postgres"',
      ],
    });
    const missing = scoreRun(
      [search],
      [facts({ tool_calls: [call("mock_search", { q: "sqlite" })] })],
    );
    expect(missing.failures).toEqual([
      'turn 1: mock_search call 1: arguments did not match: query: expected a string containing "sqlite", got nothing',
    ]);
  });

  it("an extra, unexpected call lowers precision and fails the run", () => {
    const score = scoreRun(
      [search],
      [
        facts({
          tool_calls: [
            call("mock_search", { query: "sqlite" }),
            call("mock_ticket", { title: "x" }),
          ],
        }),
      ],
    );
    expect(score).toMatchObject({
      tool_precision: 0.5,
      tool_recall: 1,
      argument_match: 1,
      success: false,
      failures: ["turn 1: unexpected call to mock_ticket"],
    });
  });

  it("matches two calls of one tool to two expectations, each call used once", () => {
    const two = expectation({
      tools: [
        { name: "mock_search", arguments: { query: { contains: "vector" } } },
        { name: "mock_search", arguments: { query: { contains: "bm25" } } },
      ],
    });
    const both = [
      call("mock_search", { query: "bm25 ranking" }),
      call("mock_search", { query: "vector databases" }),
    ];
    expect(scoreRun([two], [facts({ tool_calls: both })]).success).toBe(true);
    // One call cannot serve both expectations.
    const one = scoreRun(
      [two],
      [facts({ tool_calls: [call("mock_search", { query: "vector bm25" })] })],
    );
    expect(one).toMatchObject({ tool_recall: 0.5, argument_match: 0.5, success: false });
    expect(one.failures).toEqual([
      "turn 1: expected mock_search, called mock_search",
      `turn 1: mock_search has no call of its own: call 1 (mock_search {"query":"vector bm25"}) fits it but serves expectation 1 (mock_search), and no other call fits`,
    ]);
    // The best assignment wins even when the first pairing a greedy pass would pick is wrong.
    const loose = expectation({
      tools: [
        { name: "mock_search", arguments: { query: { any: true } } },
        { name: "mock_search", arguments: { query: { contains: "bm25" } } },
      ],
    });
    const calls = [call("mock_search", { query: "bm25" }), call("mock_search", { query: "other" })];
    expect(scoreRun([loose], [facts({ tool_calls: calls })]).argument_match).toBe(1);
  });

  it("scores irrelevance per no_tools turn", () => {
    const none = expectation({ no_tools: true });
    expect(scoreRun([none], [facts()])).toMatchObject({
      tool_precision: 1,
      tool_recall: 1,
      argument_match: 1,
      irrelevance: 1,
      success: true,
    });
    const called = scoreRun(
      [none],
      [facts({ tool_calls: [call("mock_search", { query: "hi" })] })],
    );
    expect(called).toMatchObject({
      tool_precision: 0,
      irrelevance: 0,
      success: false,
      failures: ["turn 1: expected no tool call, called mock_search"],
    });
    const half = scoreRun([none, none], [facts(), facts({ tool_calls: [call("mock_ticket")] })]);
    expect(half.irrelevance).toBe(0.5);
  });

  it("checks the answer, case-insensitively", () => {
    const checks = expectation({
      no_tools: true,
      answer_contains: ["Hello", "simulated", "goodbye"],
    });
    const score = scoreRun([checks], [facts({ answer: "hello! I'm the lab's SIMULATED model." })]);
    expect(score.answer).toBeCloseTo(2 / 3);
    expect(score.success).toBe(false);
    expect(score.failures).toEqual(['turn 1: the answer does not contain "goodbye"']);
  });

  it("enforces the round limit and the turn's status", () => {
    const limited = expectation({ no_tools: true, max_rounds: 1 });
    expect(scoreRun([limited], [facts({ rounds: 1 })]).success).toBe(true);
    expect(scoreRun([limited], [facts({ rounds: 3 })]).failures).toEqual([
      "turn 1: took 3 rounds, more than the limit of 1",
    ]);
    const ended = scoreRun([expectation({})], [facts({ status: "max_rounds" })]);
    expect(ended).toMatchObject({ tool_precision: 1, tool_recall: 1, success: false });
    expect(ended.failures).toEqual(["turn 1: ended max_rounds"]);
  });

  it("scores multi-turn runs over all turns, and a turn never reached as a failure", () => {
    const ticket = expectation({
      tools: [{ name: "mock_ticket", arguments: { title: { contains: "pgbouncer" } } }],
      answer_contains: ["TCK-"],
    });
    const first = facts({ rounds: 2, tool_calls: [call("mock_search", { query: "sqlite" })] });
    const good = facts({
      rounds: 2,
      answer: "mock_ticket returned TCK-000123",
      tool_calls: [call("mock_ticket", { title: "pgbouncer pool exhaustion" })],
    });
    expect(scoreRun([search, ticket], [first, good])).toMatchObject({
      tool_precision: 1,
      tool_recall: 1,
      argument_match: 1,
      answer: 1,
      success: true,
    });
    const wrongSecond = scoreRun(
      [search, ticket],
      [first, facts({ tool_calls: [call("mock_search", { query: "pgbouncer" })] })],
    );
    expect(wrongSecond).toMatchObject({
      tool_precision: 0.5,
      tool_recall: 0.5,
      argument_match: 0.5,
      answer: 0,
      success: false,
      failures: [
        "turn 2: expected mock_ticket, called mock_search",
        'turn 2: the answer does not contain "TCK-"',
      ],
    });
    const cut = scoreRun([search, ticket], [first]);
    expect(cut).toMatchObject({ tool_recall: 0.5, argument_match: 0.5, success: false });
    expect(cut.failures[0]).toBe("turn 2: was not run");
  });

  it("a turn that lists no tools and calls one loses precision", () => {
    const score = scoreRun(
      [expectation({ answer_contains: ["ok"] })],
      [facts({ answer: "ok", tool_calls: [call("mock_search")] })],
    );
    expect(score).toMatchObject({
      tool_precision: 0,
      tool_recall: 1,
      irrelevance: null,
      success: false,
      failures: ["turn 1: unexpected call to mock_search"],
    });
  });
});
