import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot, temporaryDirectory } from "../../../test/paths.js";
import { parseSuite } from "../suite.js";
import { bfclSuiteText } from "./bfcl-suite-text.js";
import { type BfclImport, importBfcl } from "./import-bfcl.js";

const FIXTURES = join(repoRoot, "test/fixtures/bfcl");
const fixture = (category: string) => join(FIXTURES, `BFCL_v4_${category}.json`);

/** The whole fixture folder, imported once and read back through the suite parser. */
function importAll(options: Parameters<typeof importBfcl>[1] = {}): BfclImport {
  return importBfcl([FIXTURES], options);
}

function scenario(result: BfclImport, id: string) {
  const found = result.suite?.scenarios.find((entry) => entry.id === id);
  if (found === undefined) throw new Error(`no scenario ${id}`);
  return found;
}

type Schema = Record<string, Record<string, unknown>>;
function propertiesOf(result: BfclImport, id: string, tool = 0): Schema {
  const parameters = scenario(result, id).tools?.[tool]?.parameters as unknown as {
    properties: Schema;
  };
  return parameters.properties;
}

const folders: { remove(): void }[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) folder.remove();
});
function scratch(): string {
  const folder = temporaryDirectory();
  folders.push(folder);
  return folder.path;
}

describe("importBfcl on the fixtures", () => {
  const result = importAll();

  it("imports every supported category, mapped to the lab's categories, in file order", () => {
    expect(result.summary.imported).toEqual({
      irrelevance: 2,
      live_irrelevance: 2,
      live_multiple: 1,
      live_parallel: 1,
      live_parallel_multiple: 1,
      live_relevance: 1,
      live_simple: 2,
      multiple: 2,
      parallel: 2,
      parallel_multiple: 2,
      simple_java: 2,
      simple_javascript: 2,
      simple_python: 3,
    });
    const byCategory = (bfcl: string) =>
      result.suite?.scenarios
        .filter((entry) => entry.origin?.category === bfcl)
        .map((entry) => entry.category);
    expect(byCategory("simple_java")).toEqual(["simple", "simple"]);
    expect(byCategory("live_simple")).toEqual(["simple", "simple"]);
    expect(byCategory("live_multiple")).toEqual(["multiple"]);
    expect(byCategory("live_parallel_multiple")).toEqual(["parallel_multiple"]);
    expect(byCategory("live_irrelevance")).toEqual(["irrelevance", "irrelevance"]);
    expect(byCategory("live_relevance")).toEqual(["relevance"]);
    expect(scenario(result, "parallel_0").category).toBe("parallel");
  });

  it("writes a suite the suite parser reads back, every case scored on the first response", () => {
    if (result.suite === null) throw new Error("no suite");
    const suite = parseSuite(bfclSuiteText(result.suite, result.summary), "bfcl.yaml");
    expect(suite.scenarios).toHaveLength(result.summary.total);
    expect(suite.config).toEqual({ tools: [] });
    expect(suite.scenarios.every((entry) => entry.scoring === "first_response")).toBe(true);
    const java = suite.scenarios.find((entry) => entry.id === "simple_java_1");
    expect(java?.origin).toEqual({
      benchmark: "bfcl",
      id: "simple_java_1",
      category: "simple_java",
    });
    expect(java?.tools[0]?.mock).toEqual({ result: "ok" });
  });

  it('keeps the possible answer as is: dotted names, optional ("") and multi-valued answers', () => {
    expect(scenario(result, "simple_python_2").bfcl_answer).toEqual([
      {
        "restaurants.search": {
          location: ["Lisbon", "Lisbon, Portugal", "lisbon"],
          limit: [3],
          filters: [""],
          matrix: [""],
          include_reviews: [true],
        },
      },
    ]);
    expect(scenario(result, "simple_java_1").bfcl_answer?.[0]).toEqual({
      "SQLCompletionAnalyzer.makeProposalsFromObject": {
        object: ["Customers"],
        useShortName: [true],
        params: [{ limit: [50], schemaFilter: ["public"] }],
        ids: [""],
        timeout: [""],
      },
    });
    expect(scenario(result, "parallel_0").bfcl_answer).toHaveLength(2);
    expect(scenario(result, "parallel_0").turns[0]?.expect).toBeUndefined();
  });

  it("expects no call for irrelevance and some call for live_relevance, without an answer", () => {
    for (const id of ["irrelevance_0", "live_irrelevance_0-0-0"]) {
      expect(scenario(result, id).turns[0]?.expect).toEqual({ no_tools: true });
      expect(scenario(result, id).bfcl_answer).toBeUndefined();
    }
    expect(scenario(result, "live_relevance_0-0-0").turns[0]?.expect).toEqual({ any_tool: true });
  });

  it("renames dotted functions and keeps the others", () => {
    expect(scenario(result, "simple_python_1").tools?.map((tool) => tool.name)).toEqual([
      "geometry_distance",
    ]);
    expect(scenario(result, "multiple_0").tools?.map((tool) => tool.name)).toEqual([
      "circle_area",
      "circle_circumference",
    ]);
    expect(scenario(result, "simple_python_0").tools?.[0]?.name).toBe("calculate_triangle_area");
  });

  it("maps Python types as BFCL does for OpenAI-style models: dict, tuple, float, any", () => {
    const properties = propertiesOf(result, "simple_python_1");
    expect(properties.start).toEqual({
      type: "array",
      items: { type: "number" },
      description: "The first point.",
    });
    expect(properties.scale).toEqual({
      type: "number",
      format: "float",
      description: "Units per kilometre. This is a float type value.",
      default: 1,
    });
    expect(properties.options).toEqual({
      type: "object",
      description: "Extra options.",
      properties: {
        rounding: { type: "integer", description: "Digits kept." },
        ratio: {
          type: "number",
          format: "float",
          description: "A ratio. This is a float type value.",
        },
      },
    });
    expect(properties.tag).toEqual({
      type: "string",
      description: "Anything to label the result.",
    });
    const parameters = scenario(result, "simple_python_1").tools?.[0]?.parameters as Schema;
    expect(parameters.type).toBe("object");
    expect(parameters.required).toEqual(["start", "end"]);
    expect(scenario(result, "simple_python_1").tools?.[0]?.description).toBe(
      "Distance between two points. Note that the provided function is in Python 3 syntax.",
    );
  });

  it("follows nested lists: dicts in a list and lists of lists", () => {
    const properties = propertiesOf(result, "simple_python_2");
    expect(properties.filters).toEqual({
      type: "array",
      description: "Filters.",
      items: {
        type: "object",
        properties: {
          name: { type: "string", description: "Filter name." },
          weight: {
            type: "number",
            format: "float",
            description: "Weight. This is a float type value.",
          },
        },
      },
    });
    expect(properties.matrix).toEqual({
      type: "array",
      description: "Rows.",
      items: { type: "array", items: { type: "number" } },
    });
  });

  it("describes Java parameters as strings in Java syntax, list element types in words", () => {
    const tool = scenario(result, "simple_java_1").tools?.[0];
    expect(tool?.name).toBe("SQLCompletionAnalyzer_makeProposalsFromObject");
    expect(tool?.description).toBe(
      "Generates SQL completion proposals. Note that the provided function is in Java 8 SDK syntax.",
    );
    const properties = propertiesOf(result, "simple_java_1");
    expect(properties.object).toEqual({
      type: "string",
      description:
        "The database object. This parameter can be of any type of Java object in string representation.",
    });
    expect(properties.useShortName).toEqual({
      type: "string",
      description: "Use short names. This is Java boolean type parameter in string representation.",
    });
    expect(properties.params?.type).toBe("string");
    expect(properties.ids).toEqual({
      type: "string",
      description:
        "Ids to include. This is Java ArrayList type parameter in string representation. The list elements are of type long; they are not in string representation.",
    });
  });

  it("describes JavaScript parameters as strings, a dict's schema as Python's json.dumps writes it", () => {
    const properties = propertiesOf(result, "simple_javascript_1");
    expect(properties.chart).toEqual({
      type: "string",
      required: ["nm", "mn"],
      description:
        'The chart. This is JavaScript dict type parameter in string representation. The dictionary entries have the following schema; they are not in string representation. {"nm": {"type": "String", "description": "Name."}, "mn": {"type": "String", "description": "Module: caf\\u00e9."}}',
    });
    expect(properties.data).toEqual({
      type: "string",
      description:
        "The data. This is JavaScript array type parameter in string representation. The list elements are of type float; they are not in string representation.",
    });
    expect(properties.options?.description).toBe(
      "Render options. This parameter can be of any type of JavaScript object in string representation.",
    );
    expect(propertiesOf(result, "simple_javascript_0").isComplete).toEqual({
      type: "string",
      description:
        "Finished typing. This is JavaScript Boolean type parameter in string representation.",
    });
  });

  it("keeps system messages as the scenario's system prompt and joins consecutive user messages", () => {
    const live = scenario(result, "live_simple_0-0-0");
    expect(live.system_prompt).toBe("You are a helpful travel agent. Answer in one sentence.");
    expect(live.turns).toEqual([{ user: "Find me a hotel in Berlin for tonight." }]);
    expect(scenario(result, "live_simple_1-0-1").system_prompt).toBeUndefined();
    expect(scenario(result, "live_irrelevance_1-0-1").turns[0]?.user).toBe(
      "I have a question.\n\nWhat is the capital of France?",
    );
  });

  it("lists what it cannot import with the reason: stateful and unknown categories, replayed conversations", () => {
    const skipped = result.summary.skipped.map(({ file, line, id, reason }) => ({
      file: file.slice(FIXTURES.length + 1),
      line,
      id,
      reason: reason.split(" ")[0],
    }));
    expect(skipped).toEqual([
      { file: "BFCL_v4_exec_simple.json", line: 1, id: "exec_simple_0", reason: "unknown" },
      {
        file: "BFCL_v4_format_sensitivity.json",
        line: null,
        id: null,
        reason: "format_sensitivity",
      },
      {
        file: "BFCL_v4_live_irrelevance.json",
        line: 3,
        id: "live_irrelevance_2-1-0",
        reason: "the",
      },
      {
        file: "BFCL_v4_multi_turn_base.json",
        line: 1,
        id: "multi_turn_base_0",
        reason: "multi_turn:",
      },
      {
        file: "BFCL_v4_multi_turn_base.json",
        line: 2,
        id: "multi_turn_base_1",
        reason: "multi_turn:",
      },
    ]);
    expect(result.summary.skipped[2]?.reason).toContain('role "assistant"');
    expect(result.summary.skipped[3]?.reason).toContain("stateful backends");
  });
});

describe("importBfcl options", () => {
  it("--categories picks BFCL categories and counts the others as not selected", () => {
    const result = importAll({ categories: ["simple_java", "live_relevance"] });
    expect(result.summary.imported).toEqual({ simple_java: 2, live_relevance: 1 });
    expect(result.summary.skipped).toEqual([]);
    expect(result.summary.not_selected).toBeGreaterThan(20);
  });

  it("--limit keeps the first N cases of each category", () => {
    const result = importAll({ limit: 1 });
    expect(Object.values(result.summary.imported).every((count) => count === 1)).toBe(true);
    expect(result.suite?.scenarios.map((entry) => entry.id)).toContain("simple_python_0");
    expect(result.suite?.scenarios.map((entry) => entry.id)).not.toContain("simple_python_1");
    expect(result.summary.total).toBe(13);
    // simple_python 2, live_irrelevance 2 (its replayed conversation among them), 7 others 1 each.
    expect(result.summary.over_limit).toBe(11);
  });

  it("refuses categories it cannot import or does not know", () => {
    expect(() => importAll({ categories: ["multi_turn_base"] })).toThrow(
      /--categories: multi_turn_base: multi_turn: it needs BFCL's stateful backends/,
    );
    expect(() => importAll({ categories: ["simple"] })).toThrow(/unknown BFCL category "simple"/);
  });

  it("reads answers from --answers instead of possible_answer/ beside the file", () => {
    const folder = scratch();
    mkdirSync(join(folder, "answers"));
    copyFileSync(fixture("parallel"), join(folder, "BFCL_v4_parallel.json"));
    copyFileSync(
      join(FIXTURES, "possible_answer/BFCL_v4_parallel.json"),
      join(folder, "answers/BFCL_v4_parallel.json"),
    );
    const result = importBfcl([join(folder, "BFCL_v4_parallel.json")], {
      answersDir: join(folder, "answers"),
    });
    expect(result.summary.imported).toEqual({ parallel: 2 });
  });
});

describe("importBfcl on bad input", () => {
  it("names file:line:column for a line that is not JSON", () => {
    const folder = scratch();
    const path = join(folder, "BFCL_v4_irrelevance.json");
    const good = `{"id": "irrelevance_0", "question": [[{"role": "user", "content": "hi"}]], "function": []}`;
    writeFileSync(path, `${good}\n\n{"id": "irrelevance_1" "question": []}\n`);
    expect(() => importBfcl([path])).toThrow(`${path}:3:24: not a JSON object on this line`);
    writeFileSync(path, `${good}\n{"id": "irrelevance_1", \n`);
    expect(() => importBfcl([path])).toThrow(`${path}:2:25: not a JSON object on this line`);
  });

  it("names file:line and the field for a case of the wrong shape", () => {
    const folder = scratch();
    const path = join(folder, "BFCL_v4_irrelevance.json");
    writeFileSync(path, `{"id": "irrelevance_0", "question": "hello", "function": []}\n`);
    expect(() => importBfcl([path])).toThrow(`${path}:1: not a BFCL case: question:`);
    writeFileSync(path, `["irrelevance_0"]\n`);
    expect(() => importBfcl([path])).toThrow(`${path}:1: not a BFCL case`);
  });

  it("names the case whose possible answer is missing, or whose answer file is", () => {
    const folder = scratch();
    const path = join(folder, "BFCL_v4_parallel.json");
    copyFileSync(fixture("parallel"), path);
    expect(() => importBfcl([path])).toThrow(
      `${path}:1: case parallel_0 needs its possible answer, and ${join(folder, "possible_answer/BFCL_v4_parallel.json")} does not exist`,
    );
    mkdirSync(join(folder, "possible_answer"));
    writeFileSync(
      join(folder, "possible_answer/BFCL_v4_parallel.json"),
      `{"id": "parallel_0", "ground_truth": [{"weather.get": {"city": ["Paris"]}}]}\n`,
    );
    expect(() => importBfcl([path])).toThrow(
      `${path}:2: case parallel_1 has no possible answer in`,
    );
  });

  it("names the line of a possible answer of the wrong shape", () => {
    const folder = scratch();
    const path = join(folder, "BFCL_v4_parallel.json");
    copyFileSync(fixture("parallel"), path);
    mkdirSync(join(folder, "possible_answer"));
    const answers = join(folder, "possible_answer/BFCL_v4_parallel.json");
    writeFileSync(
      answers,
      `{"id": "parallel_0", "ground_truth": [{"weather.get": {"city": "Paris"}}]}\n`,
    );
    expect(() => importBfcl([path])).toThrow(
      `${answers}:1: not a BFCL possible answer: ground_truth.0.weather.get.city:`,
    );
  });

  it("refuses a path that does not exist and a folder without BFCL files", () => {
    const folder = scratch();
    expect(() => importBfcl([join(folder, "nope.json")])).toThrow(
      /nope.json: no such file or folder/,
    );
    expect(() => importBfcl([folder])).toThrow(/no BFCL data files in this folder/);
  });

  it("skips a second case with the same id, naming the first", () => {
    const result = importBfcl([fixture("irrelevance"), fixture("irrelevance")]);
    // The same file twice is read once.
    expect(result.summary.imported).toEqual({ irrelevance: 2 });
    const folder = scratch();
    const copy = join(folder, "BFCL_v4_irrelevance.json");
    copyFileSync(fixture("irrelevance"), copy);
    const twice = importBfcl([fixture("irrelevance"), copy]);
    expect(twice.summary.skipped.map((entry) => entry.reason)).toEqual([
      `duplicate id (first at ${fixture("irrelevance")}:1)`,
      `duplicate id (first at ${fixture("irrelevance")}:2)`,
    ]);
  });

  it("skips a case whose functions collide once dots become underscores", () => {
    const folder = scratch();
    const path = join(folder, "BFCL_v4_irrelevance.json");
    const doc = (name: string) => ({
      name,
      description: "",
      parameters: { type: "dict", properties: {} },
    });
    writeFileSync(
      path,
      `${JSON.stringify({ id: "irrelevance_0", question: [[{ role: "user", content: "hi" }]], function: [doc("a.b"), doc("a_b")] })}\n`,
    );
    const result = importBfcl([path]);
    expect(result.suite).toBeNull();
    expect(result.summary.skipped[0]?.reason).toBe(
      'two functions are named "a_b" once dots become underscores',
    );
  });
});
