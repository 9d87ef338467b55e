import { describe, expect, it } from "vitest";
import type { ScenarioRun, ScenarioRunsResponse } from "./api-types.js";
import {
  argumentsText,
  cellTally,
  runOutcome,
  scenarioOptions,
  scenarioRows,
} from "./experiment-scenarios.js";

const run = (repetition: number, success: boolean | null, session = `s${repetition}`) =>
  ({
    session_id: session,
    repetition,
    success,
    failures: success === false ? ["mock_search: query: expected contains 'x'"] : [],
    answer: "ok",
    tool_calls: [],
  }) satisfies ScenarioRun;

describe("the scenarios of an experiment", () => {
  it("lists each scenario once, by category then id", () => {
    expect(
      scenarioOptions([
        { scenario: "search", category: "simple" },
        { scenario: "chit-chat", category: "irrelevance" },
        { scenario: "search", category: "simple" },
        { scenario: "a-search", category: "simple" },
      ]),
    ).toStrictEqual([
      { scenario: "chit-chat", category: "irrelevance" },
      { scenario: "a-search", category: "simple" },
      { scenario: "search", category: "simple" },
    ]);
    expect(scenarioOptions([])).toStrictEqual([]);
  });
});

describe("one scenario's runs side by side", () => {
  const response: ScenarioRunsResponse = {
    scenario: "search",
    category: "simple",
    cells: [
      { cell: "a", label: "A", runs: [run(2, true), run(1, false)] },
      { cell: "b", label: "B", runs: [run(1, true, "b1"), run(3, null, "b3")] },
      { cell: "c", label: "C", runs: [] },
    ],
  };

  it("makes a row per repetition any cell ran, with an empty slot where a cell has none", () => {
    const rows = scenarioRows(response);
    expect(rows.map((row) => row.repetition)).toStrictEqual([1, 2, 3]);
    expect(rows[0]?.cells.map((runs) => runs.map((r) => r.session_id))).toStrictEqual([
      ["s1"],
      ["b1"],
      [],
    ]);
    expect(rows[2]?.cells.map((runs) => runs.length)).toStrictEqual([0, 1, 0]);
    expect(scenarioRows({ ...response, cells: [] })).toStrictEqual([]);
  });

  it("tallies a column and names each run's outcome", () => {
    expect(cellTally(response.cells[0]?.runs ?? [])).toStrictEqual({
      passed: 1,
      failed: 1,
      unfinished: 0,
    });
    expect(cellTally(response.cells[1]?.runs ?? [])).toStrictEqual({
      passed: 1,
      failed: 0,
      unfinished: 1,
    });
    expect([run(1, true), run(1, false), run(1, null)].map(runOutcome)).toStrictEqual([
      "passed",
      "failed",
      "unfinished",
    ]);
  });

  it("writes arguments as one line of JSON, a raw string as it came", () => {
    expect(argumentsText({ query: "agent lab", limit: 3 })).toBe('{"query":"agent lab","limit":3}');
    expect(argumentsText('{"query": broken')).toBe('{"query": broken');
    expect(argumentsText(null)).toBe("");
    expect(argumentsText(undefined)).toBe("");
  });
});
