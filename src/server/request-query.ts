import type { Context } from "hono";

/**
 * The query string's parameters, an empty one (`?q=&tag=`, as a form with blank fields sends it)
 * read as absent. Every list route parses the whole of it with a strict schema, so a parameter it
 * does not know is a 400 naming it, not a filter silently ignored.
 */
export function queryOf(c: Context): Record<string, string> {
  return Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value !== ""));
}
