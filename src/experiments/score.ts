import type { ArgumentMatcher } from "../domain/argument-matcher.js";
import type {
  ExpectedToolCall,
  RunScore,
  TurnExpectation,
  TurnFacts,
} from "../domain/experiment.js";
import { matchArgument, matchArguments } from "../domain/match-argument.js";

/**
 * Scores one run (a scenario's turns, as stored) against the scenario's expectations.
 *
 * Tool names are compared per turn as multisets (two expected searches need two calls), then
 * summed over the run's turns:
 * - tool_precision = matched called names / called names. 1 when nothing was called; a turn that
 *   expects no tools (it lists none) and calls some scores 0 for those calls.
 * - tool_recall = matched expected names / expected names; 1 when none are expected. A wrong tool
 *   (mock_ticket where mock_search was expected) scores 0 for that expectation, and also counts
 *   against precision.
 * - argument_match = expected calls that have a call of the same name in that turn whose arguments
 *   match every matcher of the expectation / expected calls; 1 when none. Each call serves one
 *   expectation (the best assignment is found), so one call cannot satisfy two expectations.
 *   Only the arguments an expectation names are checked.
 * - irrelevance = turns with `no_tools` that called no tool / turns with `no_tools`; null when no
 *   turn has `no_tools`.
 * - answer = passed `answer_contains` checks / all of them (case-insensitive substring of the
 *   turn's final answer); null when there are none.
 * - success = every turn has status "completed", took no more rounds than its `max_rounds` (when
 *   set), and recall = 1, argument_match = 1, precision = 1 (an extra, unexpected call fails the
 *   run), no irrelevance failure and every answer check passed.
 * `failures` has one readable line per failed check ("turn 1: expected mock_search, called
 * mock_ticket"). A turn the run never reached counts as a turn that called nothing and failed.
 */
export function scoreRun(expect: TurnExpectation[], turns: TurnFacts[]): RunScore {
  const failures: string[] = [];
  let called = 0;
  let expected = 0;
  let matchedNames = 0;
  let argumentsMatched = 0;
  let irrelevanceTurns = 0;
  let irrelevancePassed = 0;
  let answerChecks = 0;
  let answerPassed = 0;

  expect.forEach((expectation, index) => {
    const turn = `turn ${index + 1}`;
    const facts = turns[index];
    if (facts === undefined) {
      failures.push(`${turn}: was not run`);
    } else {
      if (facts.status !== "completed") failures.push(`${turn}: ended ${facts.status}`);
      if (expectation.max_rounds !== undefined && facts.rounds > expectation.max_rounds) {
        failures.push(
          `${turn}: took ${facts.rounds} rounds, more than the limit of ${expectation.max_rounds}`,
        );
      }
    }
    const calls = facts?.tool_calls ?? [];
    const calledNames = calls.map((call) => call.name);
    const expectedNames = expectation.tools.map((tool) => tool.name);
    const { matched, missing, extra } = compareNames(expectedNames, calledNames);
    called += calledNames.length;
    expected += expectedNames.length;
    matchedNames += matched;

    if (expectation.no_tools) {
      irrelevanceTurns++;
      if (calls.length === 0) irrelevancePassed++;
      else failures.push(`${turn}: expected no tool call, called ${listNames(calledNames)}`);
    }
    if (missing.length > 0) {
      failures.push(`${turn}: expected ${listNames(missing)}, called ${listNames(calledNames)}`);
    } else if (extra.length > 0 && !expectation.no_tools) {
      failures.push(`${turn}: unexpected call to ${listNames(extra)}`);
    }

    const assignment = assignCalls(expectation.tools, calls);
    argumentsMatched += assignment.filter((call) => call !== null).length;
    expectation.tools.forEach((tool, toolIndex) => {
      if (assignment[toolIndex] !== null) return;
      const candidates = calls.filter((call) => call.name === tool.name);
      // A missing tool is already reported; here only calls with the wrong arguments.
      if (candidates.length === 0) return;
      failures.push(`${turn}: ${tool.name} ${describeMismatch(tool, candidates)}`);
    });

    const answer = (facts?.answer ?? "").toLowerCase();
    for (const needle of expectation.answer_contains) {
      answerChecks++;
      if (answer.includes(needle.toLowerCase())) answerPassed++;
      else failures.push(`${turn}: the answer does not contain ${JSON.stringify(needle)}`);
    }
  });

  return {
    tool_precision: called === 0 ? 1 : matchedNames / called,
    tool_recall: expected === 0 ? 1 : matchedNames / expected,
    argument_match: expected === 0 ? 1 : argumentsMatched / expected,
    irrelevance: irrelevanceTurns === 0 ? null : irrelevancePassed / irrelevanceTurns,
    answer: answerChecks === 0 ? null : answerPassed / answerChecks,
    success: failures.length === 0,
    failures,
  };
}

type Call = TurnFacts["tool_calls"][number];

function argumentsMatch(tool: ExpectedToolCall, call: Call): boolean {
  return call.name === tool.name && matchArguments(tool.arguments, call.arguments);
}

/** The called names against the expected ones, as multisets. */
function compareNames(
  expected: readonly string[],
  called: readonly string[],
): { matched: number; missing: string[]; extra: string[] } {
  const remaining = [...called];
  const missing: string[] = [];
  for (const name of expected) {
    const at = remaining.indexOf(name);
    if (at === -1) missing.push(name);
    else remaining.splice(at, 1);
  }
  return { matched: expected.length - missing.length, missing, extra: remaining };
}

/**
 * A maximum matching of expectations to calls whose arguments fit them (augmenting paths; a turn
 * has a handful of calls). Entry i is the call index serving expectation i, or null.
 */
function assignCalls(
  tools: readonly ExpectedToolCall[],
  calls: readonly Call[],
): (number | null)[] {
  const fits = tools.map((tool) =>
    calls.flatMap((call, index) => (argumentsMatch(tool, call) ? [index] : [])),
  );
  const owner: (number | null)[] = calls.map(() => null);
  const tryAssign = (toolIndex: number, seen: Set<number>): boolean => {
    for (const callIndex of fits[toolIndex] ?? []) {
      if (seen.has(callIndex)) continue;
      seen.add(callIndex);
      const current = owner[callIndex];
      if (current === null || current === undefined || tryAssign(current, seen)) {
        owner[callIndex] = toolIndex;
        return true;
      }
    }
    return false;
  };
  for (const toolIndex of tools.keys()) tryAssign(toolIndex, new Set());
  const assignment: (number | null)[] = tools.map(() => null);
  owner.forEach((toolIndex, callIndex) => {
    if (toolIndex !== null) assignment[toolIndex] = callIndex;
  });
  return assignment;
}

/** "called with query "postgres" (expected contains "sqlite")", for the closest candidate. */
function describeMismatch(tool: ExpectedToolCall, candidates: readonly Call[]): string {
  const problems = (call: Call) =>
    Object.entries(tool.arguments).flatMap(([name, matcher]) => {
      const present = Object.hasOwn(call.arguments, name);
      const actual = present ? call.arguments[name] : undefined;
      if (matchArgument(matcher, actual)) return [];
      const got = present ? JSON.stringify(actual) : "nothing";
      return [`${name}: expected ${describeMatcher(matcher)}, got ${got}`];
    });
  const lists = candidates.map(problems);
  if (lists.some((list) => list.length === 0)) {
    // A call that fits on its own but served another expectation of the same tool.
    return "has no call of its own: the matching call served another expectation";
  }
  const closest = lists.reduce((best, list) => (list.length < best.length ? list : best));
  const which = candidates.length > 1 ? "no call matched" : "arguments did not match";
  const detail = closest.join("; ");
  return `${which}: ${detail}`;
}

function describeMatcher(matcher: ArgumentMatcher): string {
  if ("any" in matcher) return "any value";
  if ("contains" in matcher) return `a string containing ${JSON.stringify(matcher.contains)}`;
  if ("regex" in matcher) return `a string matching /${matcher.regex}/${matcher.flags ?? ""}`;
  if ("absent" in matcher) return "no value";
  if ("optional" in matcher) return `nothing or ${describeMatcher(matcher.optional)}`;
  if ("one_of" in matcher) return `one of ${matcher.one_of.map(describeMatcher).join(", ")}`;
  return JSON.stringify(matcher.equals) ?? "undefined";
}

function listNames(names: readonly string[]): string {
  return names.length === 0 ? "no tool" : names.join(", ");
}
