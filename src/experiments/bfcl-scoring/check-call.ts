import { isDeepStrictEqual } from "node:util";
import { bfclToolName } from "../../domain/experiment.js";
import { bfclString } from "../../domain/match-argument.js";
import { floatLiteralPaths, pathKey } from "./number-literals.js";

/**
 * One call against one entry of a BFCL possible answer, by the rules of BFCL's AST checker
 * (`simple_function_checker`): the name (dots read as underscores), no argument the answer does
 * not list, every listed argument present unless `""` is among its values, each argument of its
 * declared type (an integer parameter rejects `10.0` as written, a float one accepts `10`), and
 * its value among the acceptable ones, strings compared after BFCL's normalization (also inside
 * lists and one level of objects). Returns null when the call fits, else why not.
 *
 * Java and JavaScript parameters reach the model as strings (as BFCL sends them); their values
 * are compared as normalized strings, where BFCL would first convert them to the language's type.
 */
export interface BfclCall {
  name: string;
  arguments: Record<string, unknown>;
  raw_arguments?: string | null | undefined;
}

export type BfclEntry = Record<string, Record<string, unknown[]>>;

export function checkBfclCall(
  entry: BfclEntry,
  call: BfclCall,
  types: Readonly<Record<string, string>> | undefined,
): string | null {
  const [functionName, answers] = Object.entries(entry)[0] ?? ["", {}];
  if (bfclToolName(functionName) !== call.name) {
    return `called ${call.name}, the answer is ${bfclToolName(functionName)}`;
  }
  const floats = floatLiteralPaths(call.raw_arguments ?? "") ?? null;
  for (const [name, value] of Object.entries(call.arguments)) {
    const acceptable = answers[name];
    if (acceptable === undefined) return `unexpected argument ${name}`;
    const problem = checkValue(name, value, acceptable, types?.[name], floats);
    if (problem !== null) return problem;
  }
  for (const [name, acceptable] of Object.entries(answers)) {
    if (!Object.hasOwn(call.arguments, name) && !acceptable.includes("")) {
      return `missing argument ${name}`;
    }
  }
  return null;
}

function checkValue(
  name: string,
  value: unknown,
  acceptable: readonly unknown[],
  type: string | undefined,
  floats: Set<string> | null,
): string | null {
  const answers = acceptable.filter((answer) => answer !== "");
  const got = (path: (string | number)[], shown: unknown) =>
    floats?.has(pathKey(path)) && Number.isInteger(shown) ? `${shown}.0` : JSON.stringify(shown);
  if (type !== undefined) {
    const typeProblem = checkType(value, type, [name], floats);
    if (typeProblem !== null) {
      // BFCL's "variable" case: an answer of another type than the declared one names a variable,
      // and a value of that other type is compared as it is.
      const answerType = answers.length > 0 ? kindOf(answers[0], null, []) : null;
      if (answerType !== null && answerType === kindOf(value, floats, [name])) {
        return answers.some((answer) => isDeepStrictEqual(answer, value))
          ? null
          : `${name}: expected one of ${JSON.stringify(answers)}, got ${got([name], value)}`;
      }
      return `${name}: ${typeProblem}`;
    }
  }
  if (matchesOne(value, answers)) return null;
  return `${name}: expected one of ${JSON.stringify(answers)}, got ${got([name], value)}`;
}

/** BFCL's value rules: dicts key by key, lists element-wise, strings normalized, the rest equal. */
function matchesOne(value: unknown, answers: readonly unknown[]): boolean {
  if (isPlainObject(value)) return answers.some((answer) => dictMatches(value, answer));
  if (Array.isArray(value) && value.some(isPlainObject)) {
    return answers.some(
      (answer) =>
        Array.isArray(answer) &&
        answer.length === value.length &&
        value.every((item, index) => isPlainObject(item) && dictMatches(item, answer[index])),
    );
  }
  if (typeof value === "string") {
    const normalized = bfclString(value);
    return answers.some(
      (answer) =>
        (typeof answer === "string" && bfclString(answer) === normalized) ||
        // Java and JavaScript values arrive as strings; their answers may be typed.
        (isPrimitive(answer) &&
          typeof answer !== "string" &&
          bfclString(String(answer)) === normalized),
    );
  }
  if (Array.isArray(value)) {
    const normalized = value.map(normalizeString);
    return answers.some(
      (answer) =>
        Array.isArray(answer) && isDeepStrictEqual(answer.map(normalizeString), normalized),
    );
  }
  return answers.some((answer) => isDeepStrictEqual(answer, value));
}

/** A dict answer lists acceptable values per key; `""` among them makes the key optional. */
function dictMatches(value: Record<string, unknown>, answer: unknown): boolean {
  if (!isPlainObject(answer)) return false;
  for (const [key, item] of Object.entries(value)) {
    const options = answer[key];
    if (!Array.isArray(options)) return false;
    const normalized = normalizeString(item);
    if (!options.some((option) => isDeepStrictEqual(normalizeString(option), normalized)))
      return false;
  }
  return Object.entries(answer).every(
    ([key, options]) =>
      Object.hasOwn(value, key) || (Array.isArray(options) && options.includes("")),
  );
}

const normalizeString = (value: unknown): unknown =>
  typeof value === "string" ? bfclString(value) : value;

/** Why a value is not of a JSON Schema type (`array<integer>`: items checked one level deep). */
function checkType(
  value: unknown,
  type: string,
  path: (string | number)[],
  floats: Set<string> | null,
): string | null {
  const nested = /^array<(.+)>$/.exec(type);
  const outer = nested ? "array" : type;
  const kind = kindOf(value, floats, path);
  const fits =
    outer === kind ||
    (outer === "number" && kind === "integer") ||
    // Types outside JSON Schema's (or `any`) are not judged.
    !["string", "integer", "number", "boolean", "array", "object"].includes(outer);
  if (!fits) {
    const shown =
      kind === "number" && Number.isInteger(value) ? `${value}.0` : JSON.stringify(value);
    return `expected ${article(outer)}, got ${shown}`;
  }
  if (nested && Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = checkType(item, nested[1] as string, [...path, index], floats);
      if (problem !== null) return `item ${index}: ${problem}`;
    }
  }
  return null;
}

/** The JSON Schema type of a value as the model wrote it: `10.0` is a number, not an integer. */
function kindOf(value: unknown, floats: Set<string> | null, path: (string | number)[]): string {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) return "number";
    return floats?.has(pathKey(path)) ? "number" : "integer";
  }
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  return typeof value === "object" ? "object" : typeof value;
}

const article = (type: string) =>
  type === "integer" || type === "array" || type === "object" ? `an ${type}` : `a ${type}`;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPrimitive(value: unknown): boolean {
  return ["number", "boolean", "bigint"].includes(typeof value);
}
