import { createHash } from "node:crypto";
import { MATCHER_KEYS } from "../domain/argument-matcher.js";
import { InvalidInputError } from "../domain/errors.js";
import { type Cell, Suite } from "../domain/experiment.js";
import { LabSessionConfig } from "../domain/session-config.js";
import { describeIssues } from "../domain/validation.js";
import { type YamlProblem as Problem, parseYamlFile, readTextFile } from "../files/yaml-file.js";

/**
 * Suite files: YAML read into the `Suite` schema with errors that point into the file
 * (`suites/x.yaml:14:9: scenarios.2.turns.0.expect.tools.0.name: Invalid input: expected
 * string`), the matrix expanded into cells, and the experiment id that makes runs resumable.
 */

/** Parses a suite's YAML text. Every problem is reported, one per line, with its line:column. */
export function parseSuite(text: string, fileName: string): Suite {
  return parseYamlFile(text, fileName, Suite, {
    empty: "the file is empty; a suite needs a name and scenarios",
    problems: semanticProblems,
  });
}

/** Reads and parses a suite file; a missing or unreadable file is named in the error. */
export function loadSuite(path: string): Suite {
  return parseSuite(readTextFile(path, "suite file"), path);
}

/**
 * What the schema cannot say: contradictions and typos that would otherwise pass silently (an
 * argument matcher written `{ contains: 5 }` would become a literal `equals`).
 */
function semanticProblems(raw: unknown, suite: Suite): Problem[] {
  const problems: Problem[] = [];
  const seenScenarios = new Map<string, number>();
  suite.scenarios.forEach((scenario, scenarioIndex) => {
    const first = seenScenarios.get(scenario.id);
    if (first !== undefined) {
      problems.push({
        path: ["scenarios", scenarioIndex, "id"],
        message: `duplicate scenario id ${JSON.stringify(scenario.id)} (also scenarios.${first})`,
      });
    } else {
      seenScenarios.set(scenario.id, scenarioIndex);
    }
    scenario.turns.forEach((turn, turnIndex) => {
      const expectPath = ["scenarios", scenarioIndex, "turns", turnIndex, "expect"];
      if (turn.expect.no_tools && turn.expect.any_tool) {
        problems.push({
          path: [...expectPath, "any_tool"],
          message: "any_tool: true contradicts no_tools: true",
        });
      }
      if (turnIndex === 0 && scenario.bfcl_answer !== undefined && turn.expect.tools.length > 0) {
        problems.push({
          path: [...expectPath, "tools"],
          message: "the first turn is scored by bfcl_answer; list its calls there, not under tools",
        });
      }
      if (turn.expect.no_tools && turn.expect.tools.length > 0) {
        problems.push({
          path: [...expectPath, "no_tools"],
          message: "no_tools: true contradicts the tools this turn expects",
        });
      }
      turn.expect.tools.forEach((_tool, toolIndex) => {
        const argumentsPath = [...expectPath, "tools", toolIndex, "arguments"];
        const rawArguments = valueAt(raw, argumentsPath);
        if (!isPlainObject(rawArguments)) return;
        for (const [name, matcher] of Object.entries(rawArguments)) {
          const problem = matcherProblem(matcher);
          if (problem !== null)
            problems.push({
              path: [...argumentsPath, name, ...problem.path],
              message: problem.message,
            });
        }
      });
    });
  });
  const seenConfigs = new Set<string>();
  suite.matrix.configs?.forEach((config, index) => {
    if (seenConfigs.has(config.name)) {
      problems.push({
        path: ["matrix", "configs", index, "name"],
        message: `duplicate config name ${JSON.stringify(config.name)}`,
      });
    }
    seenConfigs.add(config.name);
  });
  return problems;
}

/**
 * A value written with matcher keywords must be exactly one valid matcher (`flags` only beside
 * `regex`); `one_of` and `optional` are checked inside too.
 */
function matcherProblem(matcher: unknown): Problem | null {
  if (!isPlainObject(matcher)) return null;
  const keys = Object.keys(matcher);
  if (keys.length === 0 || !keys.every((key) => MATCHER_KEYS.includes(key))) return null;
  const named = keys.filter((key) => key !== "flags");
  if (named.length !== 1 || (keys.includes("flags") && named[0] !== "regex")) {
    return {
      path: [],
      message: `one matcher per argument: ${keys.join(", ")} given (use ${MATCHER_KEYS.filter((key) => key !== "flags").join(", ")}, and flags only beside regex; to match an object literally, write { equals: {...} })`,
    };
  }
  const key = named[0] as string;
  const value = matcher[key];
  if ((key === "contains" || key === "regex") && typeof value !== "string") {
    return { path: [key], message: `${key} takes a string` };
  }
  if (key === "regex") {
    const flags = matcher.flags;
    if (flags !== undefined && (typeof flags !== "string" || !/^[dgimsuvy]*$/.test(flags))) {
      return { path: ["flags"], message: "flags takes JavaScript regex flags (d g i m s u v y)" };
    }
    try {
      new RegExp(value as string, flags as string | undefined);
    } catch (error) {
      return { path: [key], message: (error as Error).message };
    }
  }
  if ((key === "any" || key === "absent") && value !== true) {
    return { path: [key], message: `${key} takes true` };
  }
  if (key === "one_of") {
    if (!Array.isArray(value) || value.length === 0) {
      return { path: [key], message: "one_of takes a list of one or more matchers or values" };
    }
    for (const [index, option] of value.entries()) {
      const problem = matcherProblem(option);
      if (problem !== null)
        return { path: [key, index, ...problem.path], message: problem.message };
    }
  }
  if (key === "optional") {
    const problem = matcherProblem(value);
    if (problem !== null) return { path: [key, ...problem.path], message: problem.message };
  }
  return null;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") current = current[segment];
    else if (isPlainObject(current) && typeof segment === "string") current = current[segment];
    else return undefined;
  }
  return current;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The matrix's cells. Without `configs`: modes × chat_models × event_models (each cell's event
 * agent follows its chat agent when `event_models` is not given). With `configs`: each named
 * config, merged over `suite.config`, is crossed with the modes; a named config pins what it sets
 * itself (`tool_invocation_mode`, `chat_agent.model`, `event_agent.model`) and the matrix's lists
 * vary the rest. (The suite's shared `config` pins nothing: its mode and models come from the
 * matrix.) Each cell's config is a full session config, validated; an invalid one names its cell.
 */
export function expandCells(suite: Suite): Cell[] {
  const { matrix } = suite;
  const named = matrix.configs ?? [null];
  const cells: Cell[] = [];
  for (const namedConfig of named) {
    const own = namedConfig?.config ?? {};
    const pinnedMode = own.tool_invocation_mode;
    const pinnedChat = modelOf(own.chat_agent);
    const pinnedEvent = modelOf(own.event_agent);
    const modes = pinnedMode === undefined ? matrix.modes : [pinnedMode];
    const chatModels = pinnedChat === undefined ? matrix.chat_models : [pinnedChat];
    for (const mode of modes) {
      for (const chatModel of chatModels) {
        const eventModels: (string | null)[] =
          pinnedEvent !== undefined ? [pinnedEvent] : (matrix.event_models ?? [null]);
        for (const eventModel of eventModels) {
          const cell = cellOf(suite, namedConfig?.name ?? null, own, mode, chatModel, eventModel);
          cells.push({ ...cell, order: cells.length });
        }
      }
    }
  }
  const seen = new Set<string>();
  for (const cell of cells) {
    if (seen.has(cell.id)) {
      throw new InvalidInputError(
        `suite ${JSON.stringify(suite.name)}: the matrix gives cell "${cell.id}" twice; list each mode, model and config once`,
      );
    }
    seen.add(cell.id);
  }
  return cells;
}

function modelOf(agent: unknown): string | undefined {
  if (!isPlainObject(agent)) return undefined;
  return typeof agent.model === "string" ? agent.model : undefined;
}

function cellOf(
  suite: Suite,
  name: string | null,
  own: Record<string, unknown>,
  mode: unknown,
  chatModel: string,
  /** null: follow the chat agent. */
  eventModel: string | null,
): Cell {
  const merged = deepMerge(suite.config, own);
  const chatAgent = isPlainObject(merged.chat_agent) ? merged.chat_agent : {};
  const eventAgent = isPlainObject(merged.event_agent) ? merged.event_agent : {};
  const followed: Record<string, unknown> = {};
  if (
    eventModel === null &&
    eventAgent.base_url === undefined &&
    eventAgent.api_key_env === undefined
  ) {
    // Following means the same endpoint too, as LabSessionConfig does for a missing event agent.
    if (chatAgent.base_url !== undefined) followed.base_url = chatAgent.base_url;
    if (chatAgent.api_key_env !== undefined) followed.api_key_env = chatAgent.api_key_env;
  }
  const input = {
    ...merged,
    tool_invocation_mode: mode,
    chat_agent: { ...chatAgent, model: chatModel },
    event_agent: { ...followed, ...eventAgent, model: eventModel ?? chatModel },
  };
  const event = eventModel ?? chatModel;
  const modeText = String(mode);
  const id = [...(name === null ? [] : [name]), modeText, chatModel, event].join(" · ");
  const label = `${name === null ? "" : `${name} · `}${modeText} · ${chatModel}${event === chatModel ? "" : ` (event agent ${event})`}`;
  const parsed = LabSessionConfig.safeParse(input);
  if (!parsed.success) {
    throw new InvalidInputError(
      `suite ${JSON.stringify(suite.name)}, cell "${id}": invalid session config: ${describeIssues(parsed.error)}`,
    );
  }
  const config = parsed.data;
  return {
    id,
    label,
    mode: config.tool_invocation_mode,
    chat_model: config.chat_agent.model,
    event_model: config.event_agent.model,
    config,
  };
}

/** Plain objects merge key by key; anything else (arrays included) is replaced. */
function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = result[key];
    result[key] =
      isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return result;
}

/**
 * `${slug(name)}-${8 hex}`: a hash of the suite's canonical JSON (keys sorted, defaults filled)
 * without what does not change what a run is: `repetitions` and `concurrency` (raise the
 * repetitions and resume), `description`, and `prices` (costs are computed when reporting). The
 * same suite gives the same id, so an interrupted experiment resumes; changed scenarios, matrix
 * or shared config give a new one.
 */
export function experimentIdOf(suite: Suite): string {
  const {
    repetitions: _repetitions,
    concurrency: _concurrency,
    description: _description,
    prices: _prices,
    ...identity
  } = suite;
  const hash = createHash("sha256").update(canonicalJson(identity)).digest("hex");
  return `${slugOf(suite.name)}-${hash.slice(0, 8)}`;
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    isPlainObject(item)
      ? Object.fromEntries(
          Object.keys(item)
            .sort()
            .map((key) => [key, item[key]]),
        )
      : item,
  );
}

function slugOf(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 40)
    .replace(/^-+|-+$/g, "");
  return slug || "suite";
}
