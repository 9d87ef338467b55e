/** The small builders every part of the OpenAPI document writes its schemas with. */

export type JsonObject = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: JsonObject) => ({ "application/json": { schema } });
export const object = (properties: JsonObject, required = Object.keys(properties)): JsonObject => ({
  type: "object",
  properties,
  required,
});
export const ok = (description: string, schema: JsonObject) => ({
  description,
  content: json(schema),
});
