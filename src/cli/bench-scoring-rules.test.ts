import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExperimentReport } from "../domain/experiment.js";
import { freshLab, runCli } from "./test-fixtures.js";

/**
 * The scoring rules of issue 13 through `agent-lab bench`, in both modes: the sim makes exactly the
 * calls a scenario's user message names ("call NAME with {json}", one per line), arguments kept as
 * written, so each scenario is a hand-made output with a known verdict.
 */
const lab = freshLab();

const SUITE = `
name: scoring-rules
matrix:
  modes: [chat_agent_tools, dual_agent]
repetitions: 1
concurrency: 2
tools:
  - name: weather_get
    parameters:
      type: object
      properties: { city: { type: string }, unit: { type: string }, days: { type: integer } }
      required: [city, days]
    mock: { result: { forecast: sunny } }
  - name: add
    parameters:
      type: object
      properties: { a: { type: number }, b: { type: number } }
    mock: { result: { sum: 0 } }
  - name: lookup
    parameters:
      type: object
      properties: { q: { type: string }, limit: { type: integer }, site: { type: string } }
    mock: { result: { hits: [] } }
scenarios:
  - id: bfcl-simple
    category: simple
    scoring: first_response
    bfcl_answer: [{ weather.get: { city: ["New York, NY", "NYC"], unit: ["celsius", ""], days: [3] } }]
    turns:
      - user: 'call weather_get with {"city": "new york ny", "days": 3}'
  - id: bfcl-float-for-integer
    category: simple
    scoring: first_response
    bfcl_answer: [{ weather.get: { city: ["NYC"], unit: ["celsius", ""], days: [3] } }]
    turns:
      - user: 'call weather_get with {"city": "NYC", "days": 3.0}'
  - id: bfcl-unexpected-argument
    category: simple
    scoring: first_response
    bfcl_answer: [{ weather.get: { city: ["NYC"], days: [3] } }]
    turns:
      - user: 'call weather_get with {"city": "NYC", "days": 3, "unit": "celsius"}'
  - id: bfcl-parallel-any-order
    category: parallel
    scoring: first_response
    bfcl_answer: [{ add: { a: [1.5], b: [2.0] } }, { add: { a: [3.0], b: [4.0] } }]
    turns:
      - user: |
          call add with {"a": 3, "b": 4}
          call add with {"a": 1.5, "b": 2}
  - id: bfcl-wrong-count
    category: parallel
    scoring: first_response
    bfcl_answer: [{ add: { a: [1.5], b: [2.0] } }, { add: { a: [3.0], b: [4.0] } }]
    turns:
      - user: 'call add with {"a": 1.5, "b": 2}'
  - id: matchers-pass
    category: simple
    turns:
      - user: 'call lookup with {"q": "New-York", "limit": 2}'
        expect:
          tools:
            - name: lookup
              exact_arguments: true
              string_match: bfcl
              arguments:
                q: { one_of: ["new york", "nyc"] }
                limit: { optional: 2 }
                site: { absent: true }
  - id: regex-flags
    category: simple
    turns:
      - user: 'call lookup with {"q": "NEW YORK"}'
        expect:
          tools: [{ name: lookup, arguments: { q: { regex: "^new", flags: i } } }]
  - id: exact-arguments-fail
    category: simple
    turns:
      - user: 'call lookup with {"q": "nyc", "limit": 2}'
        expect:
          tools: [{ name: lookup, exact_arguments: true, arguments: { q: nyc } }]
  - id: integer-written-as-float
    category: simple
    turns:
      - user: 'call lookup with {"q": "nyc", "limit": 2.0}'
        expect:
          tools: [{ name: lookup, arguments: { limit: 2 } }]
  - id: relevance
    category: relevance
    turns:
      - user: 'call lookup with {"q": "x"}'
        expect: { any_tool: true }
`;

/** scenario -> the failures each mode must give (empty: the run passes). */
const VERDICTS: Record<string, string[]> = {
  "bfcl-simple": [],
  "bfcl-float-for-integer": [
    'turn 1: weather_get: call 1 {"city": "NYC", "days": 3.0}: days: expected an integer, got 3.0',
  ],
  "bfcl-unexpected-argument": [
    'turn 1: weather_get: call 1 {"city": "NYC", "days": 3, "unit": "celsius"}: unexpected argument unit',
  ],
  "bfcl-parallel-any-order": [],
  "bfcl-wrong-count": ["turn 1: expected 2 calls (add, add), the response made 1 (add)"],
  "matchers-pass": [],
  "regex-flags": [],
  "exact-arguments-fail": [
    "turn 1: lookup call 1: arguments did not match: unexpected argument limit",
  ],
  "integer-written-as-float": [
    "turn 1: lookup call 1: arguments did not match: limit: expected an integer, got 2.0",
  ],
  relevance: [],
};

describe("agent-lab bench scores by the suite's rules", () => {
  it("gives each hand-made output its verdict, in both modes", async () => {
    const path = join(lab.folder, "rules.yaml");
    writeFileSync(path, SUITE);
    const result = await runCli(["--db", lab.db, "bench", path, "--json"]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0); // failed runs are results, not errors
    const report = JSON.parse(result.stdout) as ExperimentReport;
    expect(report.runs).toHaveLength(Object.keys(VERDICTS).length * 2);
    for (const run of report.runs) {
      expect(run.score.failures, `${run.cell} ${run.scenario}`).toEqual(VERDICTS[run.scenario]);
    }
    expect(new Set(report.runs.map((run) => run.cell)).size).toBe(2);
  });

  it("scoring: first_response judges the first response only, however the turn went on", async () => {
    // One round allowed: the turn stops after the calls, before the model reads their results.
    const path = join(lab.folder, "first.yaml");
    writeFileSync(
      path,
      `name: first-response
config: { max_rounds: 1 }
matrix: { modes: [chat_agent_tools, dual_agent] }
tools:
  - name: lookup
    parameters: { type: object, properties: { q: { type: string } } }
    mock: { result: { hits: [] } }
scenarios:
  - id: first-response
    category: simple
    scoring: first_response
    turns:
      - user: 'call lookup with {"q": "x"}'
        expect: { tools: [{ name: lookup }] }
  - id: all-rounds
    category: simple
    turns:
      - user: 'call lookup with {"q": "x"}'
        expect: { tools: [{ name: lookup }] }
`,
    );
    const result = await runCli(["--db", lab.db, "bench", path, "--json"]);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as ExperimentReport;
    expect(report.runs).toHaveLength(4);
    for (const run of report.runs) {
      expect(run.turns[0]?.status).toBe("max_rounds");
      expect(run.score.failures, `${run.cell} ${run.scenario}`).toEqual(
        run.scenario === "first-response" ? [] : ["turn 1: ended max_rounds"],
      );
    }
  });
});
