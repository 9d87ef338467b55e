import { describe, expect, it } from "vitest";
import {
  ArgumentMatcher,
  BfclAnswer,
  type TurnExpectation,
  TurnExpectation as TurnExpectationSchema,
  type TurnFacts,
} from "../domain/experiment.js";
import { matchArgument } from "../domain/match-argument.js";
import { floatLiteralPaths } from "./bfcl-scoring/number-literals.js";
import { type ScoringRules, scoreRun } from "./score.js";

/** The rules issue 13 adds, each on hand-made outputs, through `scoreRun` as reports call it. */

type Call = TurnFacts["tool_calls"][number];

function facts(calls: Call[], overrides: Partial<TurnFacts> = {}): TurnFacts {
  return {
    status: "completed",
    answer: "",
    rounds: 2,
    responses: 2,
    tool_calls: calls,
    ttft_ms: 5,
    wall_time_ms: 20,
    prompt_tokens: 100,
    cached_tokens: 0,
    completion_tokens: 10,
    total_tokens: 110,
    fallback_count: 0,
    tool_count: calls.length,
    ...overrides,
  };
}

/** A call as the model wrote it: the raw text is kept, the arguments parsed from it. */
const call = (name: string, raw: string, round = 1): Call => ({
  name,
  arguments: JSON.parse(raw) as Record<string, unknown>,
  raw_arguments: raw,
  round,
  ok: true,
  used_fallback: false,
});

const expectation = (input: unknown): TurnExpectation => TurnExpectationSchema.parse(input);
const matcher = (input: unknown): ArgumentMatcher => ArgumentMatcher.parse(input);
const score = (expect: unknown, calls: Call[], rules: ScoringRules = {}, more = {}) =>
  scoreRun([expectation(expect)], [facts(calls, more)], rules);

describe("matchers", () => {
  it("one_of: any of its matchers, bare values meaning equals", () => {
    const m = matcher({ one_of: ["celsius", { contains: "fahr" }] });
    expect(matchArgument(m, "celsius")).toBe(true);
    expect(matchArgument(m, "Fahrenheit")).toBe(true);
    expect(matchArgument(m, "kelvin")).toBe(false);
    expect(matchArgument(m, undefined)).toBe(false);
  });

  it("optional: absent, or present and matching; absent: only a missing value", () => {
    const m = matcher({ optional: { one_of: [1, 2] } });
    expect(matchArgument(m, undefined)).toBe(true);
    expect(matchArgument(m, 2)).toBe(true);
    expect(matchArgument(m, 3)).toBe(false);
    expect(matchArgument(matcher({ absent: true }), undefined)).toBe(true);
    expect(matchArgument(matcher({ absent: true }), null)).toBe(false);
  });

  it("regex flags", () => {
    expect(matchArgument(matcher({ regex: "^paris$", flags: "i" }), "PARIS")).toBe(true);
    expect(matchArgument(matcher({ regex: "^paris$" }), "PARIS")).toBe(false);
  });

  it("string_match bfcl: drops ` ,./-_*^`, lowercases, reads ' as \", at any depth", () => {
    expect(matchArgument(matcher("New York, NY"), "new york ny", "bfcl")).toBe(true);
    expect(matchArgument(matcher("New York, NY"), "new york ny")).toBe(false);
    expect(matchArgument(matcher(["2024-04-01"]), ["2024/04/01"], "bfcl")).toBe(true);
    expect(matchArgument(matcher({ q: "it's" }), { q: 'IT"S' }, "bfcl")).toBe(true);
    expect(matchArgument(matcher("Boston"), "Austin", "bfcl")).toBe(false);
  });
});

describe("call expectations", () => {
  const search = { name: "mock_search", arguments: { query: { contains: "sqlite" } } };

  it("exact_arguments: an argument the expectation does not name fails the call", () => {
    const raw = '{"query":"sqlite","limit":3}';
    expect(score({ tools: [search] }, [call("mock_search", raw)]).success).toBe(true);
    const strict = score({ tools: [{ ...search, exact_arguments: true }] }, [
      call("mock_search", raw),
    ]);
    expect(strict.success).toBe(false);
    expect(strict.failures).toEqual([
      "turn 1: mock_search call 1: arguments did not match: unexpected argument limit",
    ]);
  });

  it("numbers as written: an integer parameter rejects 10.0, a float one accepts 10", () => {
    const types = { parameter_types: { mock_search: { limit: "integer", ratio: "number" } } };
    const wanted = { tools: [{ name: "mock_search", arguments: { limit: 10, ratio: 10 } }] };
    expect(score(wanted, [call("mock_search", '{"limit":10,"ratio":10}')], types).success).toBe(
      true,
    );
    expect(score(wanted, [call("mock_search", '{"limit":10,"ratio":10.0}')], types).success).toBe(
      true,
    );
    const float = score(wanted, [call("mock_search", '{"limit":10.0,"ratio":10}')], types);
    expect(float.failures).toEqual([
      "turn 1: mock_search call 1: arguments did not match: limit: expected an integer, got 10.0",
    ]);
    // Without the tool's types the value is all there is: 10.0 is 10.
    expect(score(wanted, [call("mock_search", '{"limit":10.0,"ratio":10}')]).success).toBe(true);
  });

  it("any_tool: at least one call, none counted against precision", () => {
    expect(score({ any_tool: true }, [call("mock_ticket", "{}")])).toMatchObject({
      success: true,
      tool_precision: 1,
    });
    expect(score({ any_tool: true }, []).failures).toEqual([
      "turn 1: expected a tool call, none was made",
    ]);
  });

  it("names the call that served another expectation", () => {
    const two = {
      tools: [
        { name: "mock_search", arguments: { query: { contains: "a" } } },
        { name: "mock_search", arguments: { query: { contains: "b" } } },
      ],
    };
    const result = score(two, [call("mock_search", '{"query":"ab"}')]);
    expect(result.failures).toContain(
      'turn 1: mock_search has no call of its own: call 1 (mock_search {"query":"ab"}) fits it but serves expectation 1 (mock_search), and no other call fits',
    );
  });
});

describe("scoring: first_response", () => {
  const wanted = { tools: [{ name: "mock_search" }] };
  const calls = [call("mock_search", '{"query":"x"}', 1), call("mock_search", '{"query":"x"}', 2)];

  it("scores only the first response's calls; later rounds and the round limit do not count", () => {
    expect(score(wanted, calls).success).toBe(false);
    const first = score(wanted, calls, { scoring: "first_response" }, { status: "max_rounds" });
    expect(first).toMatchObject({ success: true, tool_precision: 1 });
  });

  it("a turn with no response at all fails, even one that expects no call", () => {
    const none = score(
      { no_tools: true },
      [],
      { scoring: "first_response" },
      { status: "failed", rounds: 0, responses: 0 },
    );
    expect(none.failures).toEqual(["turn 1: ended failed before its first response"]);
  });
});

describe("bfcl_answer", () => {
  const rules = (
    answer: unknown,
    types: Record<string, Record<string, string>> = {},
  ): ScoringRules => ({
    scoring: "first_response",
    bfcl_answer: BfclAnswer.parse(answer),
    parameter_types: types,
  });
  const weather = [
    { "weather.get": { city: ["New York, NY", "NYC"], unit: ["celsius", ""], days: [3] } },
  ];
  const types = { weather_get: { city: "string", unit: "string", days: "integer" } };

  it("a simple answer: renamed function, normalized strings, optional values", () => {
    const ok = score(
      {},
      [call("weather_get", '{"city":"new york ny","days":3}')],
      rules(weather, types),
    );
    expect(ok).toMatchObject({ success: true, argument_match: 1, tool_recall: 1 });
  });

  it("each BFCL failure, named", () => {
    const cases: [string, string, string][] = [
      [
        "weather_get",
        '{"city":"Boston","days":3}',
        'city: expected one of ["New York, NY","NYC"], got "Boston"',
      ],
      ["weather_get", '{"city":"NYC"}', "missing argument days"],
      ["weather_get", '{"city":"NYC","days":3,"hourly":true}', "unexpected argument hourly"],
      ["weather_get", '{"city":"NYC","days":3.0}', "days: expected an integer, got 3.0"],
      ["weather_get", '{"city":"NYC","days":"3"}', 'days: expected an integer, got "3"'],
    ];
    for (const [name, raw, problem] of cases) {
      const result = score({}, [call(name, raw)], rules(weather, types));
      expect(result.failures, raw).toEqual([`turn 1: weather_get: call 1 ${raw}: ${problem}`]);
    }
    const wrongName = score(
      {},
      [call("forecast", '{"city":"NYC","days":3}')],
      rules(weather, types),
    );
    expect(wrongName.failures).toEqual(["turn 1: no call to weather_get"]);
  });

  it("the number of calls must be the answer's", () => {
    const two = [
      call("weather_get", '{"city":"NYC","days":3}'),
      call("weather_get", '{"city":"NYC","days":3}'),
    ];
    const result = score({}, two, rules(weather, types));
    expect(result.failures).toEqual([
      "turn 1: expected 1 call (weather_get), the response made 2 (weather_get, weather_get)",
    ]);
  });

  it("parallel calls in any order; a float parameter accepts an integer", () => {
    const answer = [{ add: { a: [1.5], b: [2.0] } }, { add: { a: [3.0], b: [4.0] } }];
    const addTypes = { add: { a: "number", b: "number" } };
    const reversed = [call("add", '{"a":3,"b":4}'), call("add", '{"a":1.5,"b":2}')];
    expect(score({}, reversed, rules(answer, addTypes)).success).toBe(true);
    const wrong = [call("add", '{"a":3,"b":4}'), call("add", '{"a":3,"b":4}')];
    expect(score({}, wrong, rules(answer, addTypes)).failures).toEqual([
      'turn 1: add: call 2 {"a":3,"b":4}: a: expected one of [1.5], got 3',
    ]);
  });

  it("dict and list values as BFCL compares them", () => {
    const answer = [
      {
        book: {
          guest: [{ name: ["Ann Lee"], age: [30, ""] }],
          dates: [["2024-04-01", "2024-04-02"]],
        },
      },
    ];
    const bookTypes = { book: { guest: "object", dates: "array<string>" } };
    const good = call("book", '{"guest":{"name":"ann lee"},"dates":["2024/04/01","2024 04 02"]}');
    expect(score({}, [good], rules(answer, bookTypes)).success).toBe(true);
    const extraKey = call(
      "book",
      '{"guest":{"name":"Ann Lee","vip":true},"dates":["2024-04-01","2024-04-02"]}',
    );
    expect(score({}, [extraKey], rules(answer, bookTypes)).success).toBe(false);
    const order = call("book", '{"guest":{"name":"Ann Lee"},"dates":["2024-04-02","2024-04-01"]}');
    expect(score({}, [order], rules(answer, bookTypes)).success).toBe(false);
  });

  it("only the first turn is scored by the answer", () => {
    const later = scoreRun(
      [expectation({}), expectation({ no_tools: true })],
      [facts([call("weather_get", '{"city":"NYC","days":3}')]), facts([])],
      rules(weather, types),
    );
    expect(later.success).toBe(true);
  });
});

describe("floatLiteralPaths", () => {
  it("finds numbers written as floats at any depth, and refuses what is not one JSON value", () => {
    const paths = floatLiteralPaths('{"a": 1, "b": 2.0, "c": [1, 2e3, {"d": -0.5}], "e": "3.0"}');
    expect([...(paths ?? [])].sort()).toEqual(['["b"]', '["c",1]', '["c",2,"d"]']);
    expect(floatLiteralPaths("{'a': 1}")).toBeNull();
    expect(floatLiteralPaths('{"a": 1} x')).toBeNull();
  });
});
