/**
 * The MCP spec asks for an object schema, but servers in the wild send `{}`, leave out `type`, or
 * leave out `properties`; OpenAI-compatible endpoints refuse all three ("object schema missing
 * properties"), which would fail every turn offering the tool. Those are repaired, and the repair
 * reported. A schema for something other than an object cannot take named arguments: refused.
 */

export type NormalizedSchema =
  | { ok: true; schema: Record<string, unknown>; changes: string[] }
  | { ok: false; reason: string };

export function normalizeInputSchema(input: unknown): NormalizedSchema {
  if (input === undefined || input === null) {
    return {
      ok: true,
      schema: { type: "object", properties: {} },
      changes: ["it had no input schema: an empty object schema is used"],
    };
  }
  if (typeof input !== "object" || Array.isArray(input)) {
    return { ok: false, reason: "its input schema is not a JSON object" };
  }
  const schema: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  const changes: string[] = [];
  if (schema.type === undefined) {
    schema.type = "object";
    changes.push('its input schema had no type: type "object" was added');
  } else if (schema.type !== "object") {
    return {
      ok: false,
      reason: `its input schema's type is ${JSON.stringify(schema.type)}, not "object", so it cannot take named arguments`,
    };
  }
  if (
    schema.properties === undefined ||
    typeof schema.properties !== "object" ||
    schema.properties === null
  ) {
    schema.properties = {};
    changes.push("its input schema had no properties: an empty properties object was added");
  }
  return { ok: true, schema, changes };
}
