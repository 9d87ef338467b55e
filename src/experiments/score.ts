import type { ArgumentMatcher } from "../domain/argument-matcher.js";
import {
  type BfclAnswer,
  bfclToolName,
  type ExpectedToolCall,
  type RunScore,
  type Scoring,
  type TurnExpectation,
  type TurnFacts,
} from "../domain/experiment.js";
import { matchArgument } from "../domain/match-argument.js";
import { checkBfclTurn } from "./bfcl-scoring/check-turn.js";
import { floatLiteralPaths, pathKey } from "./bfcl-scoring/number-literals.js";
import { assignCalls } from "./call-assignment.js";
import type { ParameterTypes } from "./parameter-types.js";

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
export function scoreRun(
  expect: TurnExpectation[],
  turns: TurnFacts[],
  rules: ScoringRules = {},
): RunScore {
  const failures: string[] = [];
  let called = 0;
  let expected = 0;
  let matchedNames = 0;
  let argumentsMatched = 0;
  let irrelevanceTurns = 0;
  let irrelevancePassed = 0;
  let answerChecks = 0;
  let answerPassed = 0;
  const firstResponse = rules.scoring === "first_response";
  const types = rules.parameter_types ?? {};

  expect.forEach((expectation, index) => {
    const turn = `turn ${index + 1}`;
    const facts = turns[index];
    if (facts === undefined) {
      failures.push(`${turn}: was not run`);
    } else if (firstResponse) {
      // What happens after the first response (mock replies, more rounds) is not scored.
      if ((facts.responses ?? facts.rounds) === 0) {
        const why = facts.error === undefined ? "" : ` (${facts.error})`;
        failures.push(`${turn}: ended ${facts.status} before its first response${why}`);
      }
    } else {
      if (facts.status !== "completed") {
        const why = facts.error === undefined ? "" : ` (${facts.error})`;
        failures.push(`${turn}: ended ${facts.status}${why}`);
      }
      if (expectation.max_rounds !== undefined && facts.rounds > expectation.max_rounds) {
        failures.push(
          `${turn}: took ${facts.rounds} rounds, more than the limit of ${expectation.max_rounds}`,
        );
      }
    }
    const allCalls = facts?.tool_calls ?? [];
    const calls = firstResponse ? allCalls.filter((call) => (call.round ?? 1) === 1) : allCalls;
    const calledNames = calls.map((call) => call.name);
    const answer = index === 0 ? rules.bfcl_answer : undefined;
    const expectedNames =
      answer !== undefined
        ? answer.map((entry) => bfclToolName(Object.keys(entry)[0] ?? ""))
        : expectation.tools.map((tool) => tool.name);
    const { matched, missing, extra } = compareNames(expectedNames, calledNames);
    // `any_tool` with no tool named: any call is the expected one, none counts against precision.
    const anyCallWanted = expectation.any_tool === true && expectedNames.length === 0;
    if (!anyCallWanted) called += calledNames.length;
    expected += expectedNames.length;
    matchedNames += matched;

    if (expectation.no_tools) {
      irrelevanceTurns++;
      if (calls.length === 0) irrelevancePassed++;
      else failures.push(`${turn}: expected no tool call, called ${listNames(calledNames)}`);
    }
    if (expectation.any_tool && calls.length === 0) {
      failures.push(`${turn}: expected a tool call, none was made`);
    }

    if (answer !== undefined) {
      const verdict = checkBfclTurn(answer, calls, types);
      argumentsMatched += verdict.matched;
      for (const failure of verdict.failures) failures.push(`${turn}: ${failure}`);
    } else {
      if (missing.length > 0) {
        failures.push(`${turn}: expected ${listNames(missing)}, called ${listNames(calledNames)}`);
      } else if (extra.length > 0 && !expectation.no_tools && !anyCallWanted) {
        failures.push(`${turn}: unexpected call to ${listNames(extra)}`);
      }
      const fits = expectation.tools.map((tool) =>
        calls.flatMap((call, callIndex) =>
          mismatchOf(tool, call, types[call.name]) === null ? [callIndex] : [],
        ),
      );
      const assignment = assignCalls(fits, calls.length);
      argumentsMatched += assignment.filter((call) => call !== null).length;
      expectation.tools.forEach((tool, toolIndex) => {
        if (assignment[toolIndex] !== null) return;
        // A missing tool is already reported; here only calls with the wrong arguments.
        if (!calls.some((call) => call.name === tool.name)) return;
        const why = describeMismatch(expectation.tools, toolIndex, calls, assignment, types);
        failures.push(`${turn}: ${tool.name} ${why}`);
      });
    }

    const finalAnswer = (facts?.answer ?? "").toLowerCase();
    for (const needle of expectation.answer_contains) {
      answerChecks++;
      if (finalAnswer.includes(needle.toLowerCase())) answerPassed++;
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

/** What a run's experiment tag says about how to score it, beside its expectations. */
export interface ScoringRules {
  scoring?: Scoring | undefined;
  bfcl_answer?: BfclAnswer | undefined;
  parameter_types?: ParameterTypes | undefined;
}

type Call = TurnFacts["tool_calls"][number];

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
 * Why a call does not fit an expectation, or null: the name, each named argument's matcher
 * (strings compared as `string_match` says), no other argument under `exact_arguments`, and
 * numbers as the model wrote them (`10.0` is not an integer) where the parameter types are known.
 */
function mismatchOf(
  tool: ExpectedToolCall,
  call: Call,
  types: Readonly<Record<string, string>> | undefined,
): string[] | null {
  if (call.name !== tool.name) return [`is a call to ${call.name}`];
  const problems = Object.entries(tool.arguments).flatMap(([name, matcher]) => {
    const present = Object.hasOwn(call.arguments, name);
    const actual = present ? call.arguments[name] : undefined;
    if (matchArgument(matcher, actual, tool.string_match)) return [];
    const got = present ? JSON.stringify(actual) : "nothing";
    return [`${name}: expected ${describeMatcher(matcher)}, got ${got}`];
  });
  if (tool.exact_arguments) {
    for (const name of Object.keys(call.arguments)) {
      if (!Object.hasOwn(tool.arguments, name)) problems.push(`unexpected argument ${name}`);
    }
  }
  problems.push(...numberProblems(call, types));
  return problems.length === 0 ? null : problems;
}

/** Integers written as floats (`10.0`) for integer parameters, read from the raw argument text. */
function numberProblems(call: Call, types: Readonly<Record<string, string>> | undefined): string[] {
  if (types === undefined || !call.raw_arguments) return [];
  // Only integer parameters are judged: most calls have none, and their text need not be scanned.
  const judged = Object.keys(call.arguments).some((name) => {
    const type = types[name];
    return type === "integer" || type === "array<integer>";
  });
  if (!judged) return [];
  const floats = floatLiteralPaths(call.raw_arguments);
  if (floats === null || floats.size === 0) return [];
  const problems: string[] = [];
  for (const [name, value] of Object.entries(call.arguments)) {
    const type = types[name];
    if (type === "integer" && floats.has(pathKey([name]))) {
      problems.push(`${name}: expected an integer, got ${value}.0`);
    } else if (type === "array<integer>" && Array.isArray(value)) {
      const at = value.findIndex((_item, index) => floats.has(pathKey([name, index])));
      if (at !== -1) problems.push(`${name}: item ${at}: expected an integer, got ${value[at]}.0`);
    }
  }
  return problems;
}

/**
 * Why expectation `toolIndex` got no call: the closest candidate's problems, or, when a call fits
 * it but serves another expectation, which call and which expectation.
 */
function describeMismatch(
  tools: readonly ExpectedToolCall[],
  toolIndex: number,
  calls: readonly Call[],
  assignment: readonly (number | null)[],
  types: ParameterTypes,
): string {
  const tool = tools[toolIndex] as ExpectedToolCall;
  const candidates = calls.flatMap((call, index) =>
    call.name === tool.name
      ? [{ index, problems: mismatchOf(tool, call, types[call.name]) ?? [] }]
      : [],
  );
  const fitting = candidates.find((candidate) => candidate.problems.length === 0);
  if (fitting !== undefined) {
    const servedBy = assignment.indexOf(fitting.index);
    const call = calls[fitting.index] as Call;
    return `has no call of its own: call ${fitting.index + 1} (${call.name} ${JSON.stringify(call.arguments)}) fits it but serves expectation ${servedBy + 1} (${tools[servedBy]?.name ?? "?"}), and no other call fits`;
  }
  const closest = candidates.reduce((best, candidate) =>
    candidate.problems.length < best.problems.length ? candidate : best,
  );
  const which =
    candidates.length > 1
      ? `no call matched; the closest is call ${closest.index + 1}`
      : `call ${closest.index + 1}: arguments did not match`;
  return `${which}: ${closest.problems.join("; ")}`;
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
