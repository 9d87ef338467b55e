import { createBuiltinTools } from "../tools/builtin/index.js";

/**
 * Each parameter's JSON Schema type, per tool a run could call: `{tool: {param: type}}`, an array
 * with typed items written `array<integer>`. It travels in the run's experiment tag so scoring can
 * judge the raw argument text (an integer parameter rejects `10.0`) without the tool definitions.
 * Tools known only when the run starts (MCP, HTTP) are left out: their arguments are judged by
 * value.
 */
export type ParameterTypes = Record<string, Record<string, string>>;

interface ToolShape {
  name: string;
  parameters?: unknown;
}

export function parameterTypesOf(tools: readonly ToolShape[]): ParameterTypes {
  const types: ParameterTypes = {};
  for (const tool of tools) {
    const properties = objectAt(tool.parameters, "properties");
    if (properties === null) continue;
    const own: Record<string, string> = {};
    for (const [name, schema] of Object.entries(properties)) {
      const type = typeOf(schema);
      if (type !== null) own[name] = type;
    }
    if (Object.keys(own).length > 0) types[tool.name] = own;
  }
  return types;
}

/** The built-in mock tools' types, then the run's declared tools' (a declared tool may replace one). */
export function runParameterTypes(config: Record<string, unknown>): ParameterTypes {
  const declared = Array.isArray(config.declared_tools)
    ? (config.declared_tools as ToolShape[])
    : [];
  // Every run's tag is made with these: the built-ins are read once, not built again per run.
  builtinTypes ??= parameterTypesOf(createBuiltinTools());
  return { ...builtinTypes, ...parameterTypesOf(declared.filter(isToolShape)) };
}

let builtinTypes: ParameterTypes | null = null;

function typeOf(schema: unknown): string | null {
  if (schema === null || typeof schema !== "object") return null;
  const { type, items } = schema as { type?: unknown; items?: unknown };
  if (typeof type !== "string") return null;
  if (type !== "array") return type;
  const itemType =
    items !== null && typeof items === "object" ? (items as { type?: unknown }).type : undefined;
  return typeof itemType === "string" ? `array<${itemType}>` : "array";
}

function objectAt(value: unknown, key: string): Record<string, unknown> | null {
  if (value === null || typeof value !== "object") return null;
  const child = (value as Record<string, unknown>)[key];
  return child !== null && typeof child === "object" && !Array.isArray(child)
    ? (child as Record<string, unknown>)
    : null;
}

function isToolShape(value: unknown): value is ToolShape {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { name?: unknown }).name === "string"
  );
}
