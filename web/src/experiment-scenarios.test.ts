import { describe, expect, it } from "vitest";
import type { ScenarioRun, ScenarioRunsResponse } from "./api-types.js";
import { argumentsText, cellTally, runOutcome, scenarioRows } from "./experiment-scenarios.js";

const run = (repetition: number, success: boolean, session = `s${repetition}`) =>
  ({
    session_id: session,
    repetition,
    success,
    failures: success ? [] : ["mock_search: query: expected contains 'x'"],
    answer: "ok",
    tool_calls: [],
  }) satisfies ScenarioRun;

describe("one scenario's runs side by side", () => {
  const cell = (
    id: string,
    runs: ScenarioRun[],
    incomplete = 0,
    runs_total = runs.length,
    successes_total = runs.filter((item) => item.success).length,
  ) => ({
    cell: id,
    label: id.toUpperCase(),
    runs_total,
    successes_total,
    incomplete,
    runs,
  });
  const response: ScenarioRunsResponse = {
    experiment_id: "e",
    scenario: "search",
    category: "simple",
    cells: [
      cell("a", [run(2, true), run(1, false)]),
      cell("b", [run(1, true, "b1"), run(3, false, "b3")], 1),
      cell("c", []),
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

  it("tallies a column, saying what is unfinished or left out, and names each outcome", () => {
    expect(cellTally(cell("a", [run(1, true), run(2, false)]))).toBe("1 of 2 passed");
    expect(cellTally(cell("b", [run(1, true)], 2))).toBe("1 of 1 passed · 2 unfinished");
    // The count is over every run of the scenario in the cell, not the first ones shown.
    expect(cellTally(cell("c", [run(1, false)], 0, 1200, 1034))).toBe(
      "1,034 of 1,200 passed · first 1 shown",
    );
    expect(cellTally(cell("d", []))).toBe("0 of 0 passed");
    expect([run(1, true), run(1, false)].map(runOutcome)).toStrictEqual(["passed", "failed"]);
  });

  it("writes arguments as one line of JSON, a raw string as it came", () => {
    expect(argumentsText({ query: "agent lab", limit: 3 })).toBe('{"query":"agent lab","limit":3}');
    expect(argumentsText('{"query": broken')).toBe('{"query": broken');
    expect(argumentsText(null)).toBe("");
    expect(argumentsText(undefined)).toBe("");
  });
});
