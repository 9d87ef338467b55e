import type { ErrorObject } from "ajv";

/**
 * Turns ajv's errors into one short line a model can act on: `limit: must be <= 10; query: is
 * required`. Each part names the field first (nested fields as `items[0].name`, the arguments
 * themselves as `arguments`); parts are sorted by field and never repeated.
 */
export function formatSchemaErrors(errors: readonly ErrorObject[]): string {
  const parts = errors.map((error) => {
    const base = pathOf(error.instancePath);
    const property = propertyOf(error);
    const field = property === null ? base : joinPath(base, property);
    return { field: field || ROOT, message: messageOf(error) };
  });
  // Stable sort by field keeps ajv's order among one field's messages.
  parts.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  const lines = parts.map((part) => `${part.field}: ${part.message}`);
  return [...new Set(lines)].join("; ");
}

/** The name used when the arguments as a whole are wrong (not an object, say). */
export const ROOT = "arguments";

function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties": {
      const allowed = allowedProperties(error.parentSchema);
      return allowed.length > 0
        ? `is not allowed (allowed: ${allowed.join(", ")})`
        : "is not allowed";
    }
    case "enum": {
      const values = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return `must be one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
    }
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "minLength":
      if (params.limit === 1) return "must not be empty";
      break;
    case "minItems":
      if (params.limit === 1) return "must not be empty";
      break;
  }
  return (error.message ?? `fails ${error.keyword}`).replace(/\bNOT\b/g, "not");
}

/** The property a `required` or `additionalProperties` error is about, below its instance path. */
function propertyOf(error: ErrorObject): string | null {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return params.missingProperty;
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return params.additionalProperty;
  }
  if (error.keyword === "dependentRequired" && typeof params.missingProperty === "string") {
    return params.missingProperty;
  }
  return null;
}

function allowedProperties(schema: unknown): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  const properties = (schema as Record<string, unknown>).properties;
  if (typeof properties !== "object" || properties === null) return [];
  return Object.keys(properties);
}

/** `/items/0/na~1me` → `items[0].na/me`. */
function pathOf(pointer: string): string {
  if (!pointer) return "";
  return pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce(joinPath, "");
}

function joinPath(base: string, segment: string): string {
  if (/^\d+$/.test(segment)) return `${base}[${segment}]`;
  return base ? `${base}.${segment}` : segment;
}
