import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../test/paths.js";
import { InvalidInputError } from "../domain/errors.js";
import { ScenarioCategory } from "../domain/experiment.js";
import { expandCells, experimentIdOf, loadSuite, parseSuite } from "./suite.js";

const BUNDLED = join(repoRoot, "suites", "bundled.yaml");

const MINIMAL = `name: tiny
scenarios:
  - id: s1
    category: simple
    turns:
      - user: search for sqlite
        expect:
          tools:
            - name: mock_search
              arguments:
                query: { contains: sqlite }
`;

/** The error message of parsing `text` as x.yaml. */
function parseError(text: string): string {
  try {
    parseSuite(text, "suites/x.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as Error).message;
  }
  throw new Error("expected parseSuite to fail");
}

describe("parseSuite", () => {
  it("reads a suite and fills the defaults", () => {
    const suite = parseSuite(MINIMAL, "tiny.yaml");
    expect(suite).toMatchObject({
      name: "tiny",
      config: {},
      matrix: { modes: ["chat_agent_tools", "dual_agent"], chat_models: ["sim"] },
      repetitions: 1,
      concurrency: 4,
      prices: {},
    });
    expect(suite.scenarios[0]?.turns[0]?.expect).toEqual({
      tools: [{ name: "mock_search", arguments: { query: { contains: "sqlite" } } }],
      no_tools: false,
      answer_contains: [],
    });
  });

  it("names the file, line, column and field of a wrong type", () => {
    const text = MINIMAL.replace("- name: mock_search", "- name: 42");
    expect(parseError(text)).toBe(
      "suites/x.yaml:9:21: scenarios.0.turns.0.expect.tools.0.name: Invalid input: expected string, received number",
    );
  });

  it("points at an unknown key itself", () => {
    const text = MINIMAL.replace("        expect:\n", "        expect:\n          no_tool: true\n");
    expect(parseError(text)).toBe(
      'suites/x.yaml:8:11: scenarios.0.turns.0.expect.no_tool: unknown key "no_tool"',
    );
    expect(parseError(`repetition: 3\n${MINIMAL}`)).toBe(
      'suites/x.yaml:1:1: repetition: unknown key "repetition"',
    );
  });

  it("points at the parent of a missing key", () => {
    expect(parseError("name: empty\n")).toBe(
      "suites/x.yaml:1:1: scenarios: Invalid input: expected array, received undefined",
    );
    expect(parseError(MINIMAL.replace("    category: simple\n", ""))).toMatch(
      /^suites\/x\.yaml:3:5: scenarios\.0\.category: Invalid option/,
    );
  });

  it("reports every problem, one per line", () => {
    const text = MINIMAL.replace("name: tiny", "name: 7").replace(
      "category: simple",
      "category: easy",
    );
    const lines = parseError(text).split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      "suites/x.yaml:1:7: name: Invalid input: expected string, received number",
    );
    expect(lines[1]).toMatch(/^suites\/x\.yaml:4:15: scenarios\.0\.category: Invalid option/);
  });

  it("gives YAML syntax errors with their line and column", () => {
    expect(parseError("name: tiny\nscenarios: [1, 2\n")).toMatch(
      /^suites\/x\.yaml:3:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a \]$/,
    );
    expect(parseError("name: a\nname: b\n")).toBe(
      "suites/x.yaml:2:1: YAML syntax error: Map keys must be unique",
    );
    expect(parseError("name: a\n\tscenarios: []\n")).toMatch(
      /^suites\/x\.yaml:2:1: YAML syntax error/,
    );
    expect(parseError("name: *nowhere\n")).toMatch(/^suites\/x\.yaml:1:1: YAML error: /);
    expect(parseError("")).toBe(
      "suites/x.yaml:1:1: the file is empty; a suite needs a name and scenarios",
    );
    expect(parseError("- a\n- b\n")).toBe(
      "suites/x.yaml:1:1: Invalid input: expected object, received array",
    );
  });

  it("refuses matcher typos that would otherwise become a literal equals", () => {
    expect(parseError(MINIMAL.replace("{ contains: sqlite }", "{ contains: 5 }"))).toBe(
      "suites/x.yaml:11:36: scenarios.0.turns.0.expect.tools.0.arguments.query.contains: contains takes a string",
    );
    expect(parseError(MINIMAL.replace("{ contains: sqlite }", '{ regex: "(?i)sqlite" }'))).toMatch(
      /^suites\/x\.yaml:11:33: scenarios\.0\.turns\.0\.expect\.tools\.0\.arguments\.query\.regex: Invalid regular expression: \/\(\?i\)sqlite\/: Invalid group$/,
    );
    expect(parseError(MINIMAL.replace("{ contains: sqlite }", "{ any: false }"))).toMatch(
      /arguments\.query\.any: any takes true$/,
    );
    expect(
      parseError(MINIMAL.replace("{ contains: sqlite }", "{ contains: a, regex: b }")),
    ).toMatch(
      /^suites\/x\.yaml:11:24: scenarios\.0\.turns\.0\.expect\.tools\.0\.arguments\.query: one matcher per argument/,
    );
    expect(
      parseError(MINIMAL.replace("{ contains: sqlite }", "{ regex: sqlite, flags: q }")),
    ).toMatch(/arguments\.query\.flags: flags takes JavaScript regex flags/);
    expect(
      parseError(MINIMAL.replace("{ contains: sqlite }", "{ contains: a, flags: i }")),
    ).toMatch(/arguments\.query: one matcher per argument: contains, flags given/);
    expect(
      parseError(MINIMAL.replace("{ contains: sqlite }", "{ one_of: [a, { contains: 5 }] }")),
    ).toMatch(/arguments\.query\.one_of\.1\.contains: contains takes a string$/);
    expect(
      parseError(MINIMAL.replace("{ contains: sqlite }", "{ optional: { absent: false } }")),
    ).toMatch(/arguments\.query\.optional\.absent: absent takes true$/);
    // A literal object is still possible, spelled out.
    const literal = parseSuite(
      MINIMAL.replace("{ contains: sqlite }", "{ equals: { contains: 5 } }"),
      "x.yaml",
    );
    expect(literal.scenarios[0]?.turns[0]?.expect.tools[0]?.arguments.query).toEqual({
      equals: { contains: 5 },
    });
  });

  it("reads BFCL-style scenarios: matchers, exact arguments, string matching, scoring, answers", () => {
    const suite = parseSuite(
      `name: bfcl-style
scenarios:
  - id: weather.1
    category: simple
    scoring: first_response
    origin: { benchmark: bfcl, id: simple_python_1, category: simple_python }
    tools:
      - name: weather_get
        parameters: { type: object, properties: { city: { type: string } } }
        mock: { result: { ok: true } }
    bfcl_answer:
      - weather.get: { city: ["New York", "NYC"], unit: ["celsius", ""] }
    turns:
      - user: weather in New York?
  - id: hand-written
    category: relevance
    turns:
      - user: search it
        expect:
          any_tool: true
          tools:
            - name: mock_search
              exact_arguments: true
              string_match: bfcl
              arguments:
                query: { one_of: [sqlite, { regex: "^wal", flags: i }] }
                limit: { optional: 3 }
                site: { absent: true }
`,
      "x.yaml",
    );
    const [bfcl, hand] = suite.scenarios;
    expect(bfcl).toMatchObject({
      scoring: "first_response",
      bfcl_answer: [{ "weather.get": { city: ["New York", "NYC"], unit: ["celsius", ""] } }],
    });
    expect(hand?.turns[0]?.expect.tools[0]).toEqual({
      name: "mock_search",
      exact_arguments: true,
      string_match: "bfcl",
      arguments: {
        query: { one_of: [{ equals: "sqlite" }, { regex: "^wal", flags: "i" }] },
        limit: { optional: { equals: 3 } },
        site: { absent: true },
      },
    });
    const both = MINIMAL.replace(
      "  - id: s1\n",
      "  - id: s1\n    bfcl_answer: [{ mock_search: { query: [x] } }]\n",
    );
    expect(parseError(both)).toMatch(
      /expect\.tools: the first turn is scored by bfcl_answer; list its calls there, not under tools$/,
    );
  });

  it("refuses duplicate scenario ids and contradictory expectations", () => {
    const scenario = MINIMAL.slice(MINIMAL.indexOf("  - id: s1"));
    expect(parseError(`${MINIMAL}${scenario}`)).toBe(
      'suites/x.yaml:12:9: scenarios.1.id: duplicate scenario id "s1" (also scenarios.0)',
    );
    expect(
      parseError(
        MINIMAL.replace("        expect:\n", "        expect:\n          no_tools: true\n"),
      ),
    ).toBe(
      "suites/x.yaml:8:21: scenarios.0.turns.0.expect.no_tools: no_tools: true contradicts the tools this turn expects",
    );
  });
});

describe("loadSuite", () => {
  it("names a missing file", () => {
    expect(() => loadSuite("suites/nope.yaml")).toThrow(
      new InvalidInputError("suite file not found: suites/nope.yaml"),
    );
    expect(() => loadSuite(repoRoot)).toThrow(/is a directory/);
  });

  it("loads the bundled suite: every hand-written category twice or more, four cells on the sim model", () => {
    const suite = loadSuite(BUNDLED);
    expect(suite.name).toBe("bundled");
    expect(suite.repetitions).toBe(3);
    expect(suite.concurrency).toBe(4);
    expect(suite.config).toEqual({ tools: ["mock_search", "mock_ticket"], max_rounds: 4 });
    // parallel_multiple and relevance come with BFCL imports (see src/experiments/bfcl).
    const imported = ["parallel_multiple", "relevance"];
    for (const category of ScenarioCategory.options.filter((name) => !imported.includes(name))) {
      const count = suite.scenarios.filter((scenario) => scenario.category === category).length;
      expect(count, category).toBeGreaterThanOrEqual(2);
    }
    const cells = expandCells(suite);
    expect(cells.map((cell) => cell.id)).toEqual([
      "clean · chat_agent_tools · sim · sim",
      "clean · dual_agent · sim · sim",
      "sloppy-arguments · chat_agent_tools · sim · sim",
      "sloppy-arguments · dual_agent · sim · sim",
    ]);
    expect(cells[3]?.config).toMatchObject({
      chat_agent: { model: "sim", options: { malformed_arguments_rate: 0.3 } },
    });
    expect(cells[1]).toMatchObject({
      label: "clean · dual_agent · sim",
      mode: "dual_agent",
      chat_model: "sim",
      event_model: "sim",
      config: {
        tool_invocation_mode: "dual_agent",
        chat_agent: { model: "sim" },
        event_agent: { model: "sim" },
        tools: ["mock_search", "mock_ticket"],
        max_rounds: 4,
      },
    });
  });
});

describe("expandCells", () => {
  const suiteWith = (yaml: string) =>
    parseSuite(`${yaml}\n${MINIMAL.replace("name: tiny\n", "")}`, "x.yaml");

  it("crosses modes, chat models and event models", () => {
    const cells = expandCells(
      suiteWith(`name: grid
matrix:
  modes: [dual_agent]
  chat_models: [sim, "sim:big"]
  event_models: [sim, "sim:small"]`),
    );
    expect(cells.map((cell) => cell.id)).toEqual([
      "dual_agent · sim · sim",
      "dual_agent · sim · sim:small",
      "dual_agent · sim:big · sim",
      "dual_agent · sim:big · sim:small",
    ]);
    expect(cells[1]?.label).toBe("dual_agent · sim (event agent sim:small)");
    expect(cells[3]?.config).toMatchObject({
      chat_agent: { model: "sim:big" },
      event_agent: { model: "sim:small" },
    });
  });

  it("lets the event agent follow the chat agent's endpoint", () => {
    const [cell] = expandCells(
      suiteWith(`name: remote
config:
  chat_agent: { base_url: "http://127.0.0.1:11434/v1", api_key_env: LOCAL_KEY, temperature: 0 }
matrix:
  modes: [chat_agent_tools]
  chat_models: ["openai:llama3.1"]`),
    );
    expect(cell?.config).toMatchObject({
      chat_agent: {
        model: "openai:llama3.1",
        base_url: "http://127.0.0.1:11434/v1",
        api_key_env: "LOCAL_KEY",
        temperature: 0,
      },
      event_agent: {
        model: "openai:llama3.1",
        base_url: "http://127.0.0.1:11434/v1",
        api_key_env: "LOCAL_KEY",
      },
    });
  });

  it("merges named configs over the shared one; a named config pins what it sets", () => {
    const cells = expandCells(
      suiteWith(`name: named
config:
  max_rounds: 3
  chat_agent: { temperature: 0 }
matrix:
  configs:
    - name: clean
      config: {}
    - name: sloppy
      config:
        chat_agent: { options: { malformed_arguments_rate: 0.5 } }
    - name: only-dual
      config: { tool_invocation_mode: dual_agent, chat_agent: { model: "sim:x" } }`),
    );
    expect(cells.map((cell) => cell.id)).toEqual([
      "clean · chat_agent_tools · sim · sim",
      "clean · dual_agent · sim · sim",
      "sloppy · chat_agent_tools · sim · sim",
      "sloppy · dual_agent · sim · sim",
      "only-dual · dual_agent · sim:x · sim:x",
    ]);
    expect(cells[3]?.config).toMatchObject({
      max_rounds: 3,
      chat_agent: { model: "sim", temperature: 0, options: { malformed_arguments_rate: 0.5 } },
    });
    expect(cells[0]?.config).toMatchObject({ chat_agent: { options: {} } });
  });

  it("validates each cell's session config and names the cell", () => {
    expect(() => expandCells(suiteWith("name: bad\nconfig: { max_rounds: 0 }"))).toThrow(
      /^suite "bad", cell "chat_agent_tools · sim · sim": invalid session config: max_rounds: Too small/,
    );
    expect(() =>
      expandCells(suiteWith("name: secret\nconfig: { chat_agent: { api_key: sk-123 } }")),
    ).toThrow(/cell "chat_agent_tools · sim · sim".*chat_agent\.api_key: secrets are never stored/);
    expect(() =>
      expandCells(suiteWith("name: twice\nmatrix: { chat_models: [sim, sim] }")),
    ).toThrow(/gives cell "chat_agent_tools · sim · sim" twice/);
  });
});

describe("experimentIdOf", () => {
  it("is the slug of the name and a hash that survives formatting, key order and repetitions", () => {
    const id = experimentIdOf(parseSuite(MINIMAL, "x.yaml"));
    expect(id).toMatch(/^tiny-[0-9a-f]{8}$/);
    const reformatted = `scenarios:
  - turns: [{ expect: { tools: [{ arguments: { query: { contains: sqlite } }, name: mock_search }] }, user: search for sqlite }]
    category: simple
    id: s1
name: tiny
repetitions: 10
concurrency: 1
matrix: { modes: [chat_agent_tools, dual_agent] }
description: same runs
prices: { "openai:x": { input: 1, output: 2 } }
`;
    expect(experimentIdOf(parseSuite(reformatted, "y.yaml"))).toBe(id);
  });

  it("changes when the scenarios, the matrix or the shared config change", () => {
    const id = experimentIdOf(parseSuite(MINIMAL, "x.yaml"));
    const variants = [
      MINIMAL.replace("search for sqlite", "search for sqlite wal"),
      `${MINIMAL}matrix: { modes: [dual_agent] }\n`,
      `${MINIMAL}config: { max_rounds: 2 }\n`,
    ];
    for (const variant of variants) {
      expect(experimentIdOf(parseSuite(variant, "x.yaml"))).not.toBe(id);
    }
    expect(
      experimentIdOf(
        parseSuite(MINIMAL.replace("name: tiny", 'name: "Ünïcode Suite / v2!"'), "x.yaml"),
      ),
    ).toMatch(/^unicode-suite-v2-[0-9a-f]{8}$/);
  });
});
