import { bfclToolName } from "../../domain/experiment.js";
import type { DeclaredToolInput } from "../../domain/tool-sources.js";
import type { FunctionLanguage } from "./bfcl-categories.js";

/**
 * BFCL's function docs turned into the tools an OpenAI-style model is offered, step for step as
 * BFCL does it for such models: `_func_doc_language_specific_pre_processing` (bfcl_eval/utils.py:
 * a language hint on every description; Java and JavaScript parameters become strings described
 * in words), then `convert_to_tool` with `GORILLA_TO_OPENAPI` (model_handler/utils.py: dotted
 * names renamed, `dict`→object, `float`→number with a note, `tuple`→array, `any`→string, unknown
 * types → string). Where BFCL's Python would raise on a malformed doc (a missing description or
 * item type), this reads the missing text as "" and the missing type as `string`.
 */

type Json = Record<string, unknown>;

/** The mock result every imported tool answers with: BFCL scores the first response only. */
export const MOCK_RESULT = "ok";

/** `GORILLA_TO_OPENAPI` (bfcl_eval/constants/type_mappings.py). */
const GORILLA_TO_OPENAPI: Readonly<Record<string, string>> = {
  integer: "integer",
  number: "number",
  float: "number",
  string: "string",
  boolean: "boolean",
  bool: "boolean",
  array: "array",
  list: "array",
  dict: "object",
  object: "object",
  tuple: "array",
  any: "string",
  byte: "integer",
  short: "integer",
  long: "integer",
  double: "number",
  char: "string",
  ArrayList: "array",
  Array: "array",
  HashMap: "object",
  Hashtable: "object",
  Queue: "array",
  Stack: "array",
  Any: "string",
  String: "string",
  Bigint: "integer",
};

const HINTS: Record<FunctionLanguage, string> = {
  python: " Note that the provided function is in Python 3 syntax.",
  java: " Note that the provided function is in Java 8 SDK syntax.",
  javascript: " Note that the provided function is in JavaScript syntax.",
};

const LANGUAGE_NAMES = { java: "Java", javascript: "JavaScript" } as const;

/** One BFCL function doc as a declared tool (a deep copy: the input is not changed). */
export function convertFunction(doc: Json, language: FunctionLanguage): DeclaredToolInput {
  const copy = structuredClone(doc);
  const parameters = isObject(copy.parameters) ? copy.parameters : {};
  const properties = isObject(parameters.properties) ? parameters.properties : {};
  if (language !== "python") stringParameters(properties, language);
  return {
    name: bfclToolName(String(copy.name)),
    description: textOf(copy.description) + HINTS[language],
    parameters: { ...parameters, type: "object", properties: castToOpenAiTypes(properties) },
    mock: { result: MOCK_RESULT },
  };
}

/**
 * Java and JavaScript values travel as strings in their language's syntax; the description says
 * what type the string holds, and list element types or dict schemas move into the description.
 */
function stringParameters(properties: Json, language: "java" | "javascript"): void {
  const languageName = LANGUAGE_NAMES[language];
  for (const value of Object.values(properties)) {
    if (!isObject(value)) continue;
    const type = value.type;
    let description = textOf(value.description);
    description +=
      type === "any"
        ? ` This parameter can be of any type of ${languageName} object in string representation.`
        : ` This is ${languageName} ${String(type)} type parameter in string representation.`;
    const listType =
      language === "java" ? type === "ArrayList" || type === "Array" : type === "array";
    if (listType) {
      const items = isObject(value.items) ? value.items : {};
      description += ` The list elements are of type ${String(items.type)}; they are not in string representation.`;
      delete value.items;
    }
    if (language === "javascript" && type === "dict" && "properties" in value) {
      description += ` The dictionary entries have the following schema; they are not in string representation. ${pythonJsonDumps(value.properties)}`;
      delete value.properties;
    }
    value.description = description;
    value.type = "string";
  }
}

/** `_cast_to_openai_type`: the types it maps and the nestings it follows, no more. */
function castToOpenAiTypes(properties: Json): Json {
  for (const [key, value] of Object.entries(properties)) {
    if (!isObject(value)) continue;
    if (!("type" in value)) {
      value.type = "string";
    } else {
      const type = String(value.type);
      if (type === "float") {
        value.format = "float";
        value.description = `${textOf(value.description)} This is a float type value.`;
      }
      value.type = mapType(type);
    }
    if (value.type === "array" || value.type === "object") {
      if (isObject(value.properties)) {
        value.properties = castToOpenAiTypes(value.properties);
      } else if (isObject(value.items)) {
        const items = value.items;
        items.type = mapType(items.type);
        if (items.type === "array" && isObject(items.items)) {
          items.items.type = mapType(items.items.type);
        } else if (items.type === "object" && isObject(items.properties)) {
          items.properties = castToOpenAiTypes(items.properties);
        }
      }
    }
    properties[key] = value;
  }
  return properties;
}

function mapType(type: unknown): string {
  return (typeof type === "string" && GORILLA_TO_OPENAPI[type]) || "string";
}

function textOf(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Python's `json.dumps` with its defaults (`", "` and `": "` separators, non-ASCII escaped), so a
 * description BFCL builds with it reads the same here.
 */
export function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (isObject(value)) {
    const entries = Object.entries(value).map(
      ([key, item]) => `${asciiJson(key)}: ${pythonJsonDumps(item)}`,
    );
    return `{${entries.join(", ")}}`;
  }
  if (typeof value === "string") return asciiJson(value);
  return JSON.stringify(value) ?? "null";
}

function asciiJson(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
