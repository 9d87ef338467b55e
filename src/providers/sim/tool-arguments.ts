import type { Intent, IntentKind } from "./intents.js";

/**
 * From intents to tool arguments. The simulated model knows the built-in tools by name; for any
 * other tool it falls back to filling the tool's JSON Schema, as a model guessing would.
 */

export const SEARCH_TOOL = "mock_search";
export const TICKET_TOOL = "mock_ticket";

/** The required fields of the built-ins, for when a request carries names but no schemas. */
export const BUILTIN_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  [SEARCH_TOOL]: ["query"],
  [TICKET_TOOL]: ["title"],
};

export type JsonObject = Record<string, unknown>;

export function toolOf(kind: IntentKind): string {
  return kind === "search" ? SEARCH_TOOL : TICKET_TOOL;
}

export function kindOfTool(name: string): IntentKind | null {
  if (name === SEARCH_TOOL) return "search";
  if (name === TICKET_TOOL) return "ticket";
  return null;
}

export function argumentsOf(intent: Intent): JsonObject {
  if (intent.kind === "search") {
    return intent.limit === undefined
      ? { query: intent.query }
      : { query: intent.query, limit: intent.limit };
  }
  return intent.priority === undefined
    ? { title: intent.title }
    : { title: intent.title, priority: intent.priority };
}

interface PropertySchema {
  type?: unknown;
  enum?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  maxLength?: unknown;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function propertiesOf(schema: JsonObject): Record<string, PropertySchema> {
  const properties = schema.properties;
  if (!isObject(properties)) return {};
  return Object.fromEntries(
    Object.entries(properties).map(([name, value]) => [name, isObject(value) ? value : {}]),
  );
}

export function requiredOf(schema: JsonObject): string[] {
  const required = schema.required;
  return Array.isArray(required)
    ? required.filter((name): name is string => typeof name === "string")
    : [];
}

/**
 * Makes `args` fit `schema` where it can: missing required fields are filled (strings from
 * `subject`), numbers are clamped to their range, values outside an enum are replaced, and
 * unknown fields are dropped when the schema forbids them.
 */
export function conformToSchema(args: JsonObject, schema: JsonObject, subject: string): JsonObject {
  const properties = propertiesOf(schema);
  const result: JsonObject = {};
  for (const [name, value] of Object.entries(args)) {
    const property = properties[name];
    if (property === undefined) {
      if (schema.additionalProperties !== false) result[name] = value;
      continue;
    }
    result[name] = conformValue(value, property, subject);
  }
  for (const name of requiredOf(schema)) {
    if (result[name] === undefined) result[name] = placeholder(properties[name] ?? {}, subject);
  }
  return result;
}

function conformValue(value: unknown, property: PropertySchema, subject: string): unknown {
  if (Array.isArray(property.enum) && !property.enum.includes(value)) {
    return placeholder(property, subject);
  }
  if (typeof value === "number") {
    let number = property.type === "integer" ? Math.round(value) : value;
    if (typeof property.minimum === "number") number = Math.max(property.minimum, number);
    if (typeof property.maximum === "number") number = Math.min(property.maximum, number);
    return number;
  }
  return value;
}

function placeholder(property: PropertySchema, subject: string): unknown {
  if (Array.isArray(property.enum) && property.enum.length > 0) return property.enum[0];
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  switch (type) {
    case "integer":
    case "number":
      return typeof property.minimum === "number" ? property.minimum : 1;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
    case "null":
      return null;
    default: {
      const text = subject.trim() || "unspecified";
      return typeof property.maxLength === "number" ? text.slice(0, property.maxLength) : text;
    }
  }
}
