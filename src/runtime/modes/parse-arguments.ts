import { describeTooDeep, findTooDeep, MAX_CONFIG_DEPTH } from "../../domain/json-limits.js";

/** Tool arguments as the model wrote them: a JSON object, or the reason they are not one. */
export function parseArguments(
  raw: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, error: `arguments are not valid JSON (${(error as Error).message})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: "arguments must be a JSON object" };
  }
  // The arguments are stored and re-serialized by recursive code: a model's deeply nested JSON is
  // a tool error it can correct, not a stack overflow.
  const tooDeep = findTooDeep(value, MAX_CONFIG_DEPTH);
  if (tooDeep !== null) {
    return { ok: false, error: `arguments are ${describeTooDeep(tooDeep, MAX_CONFIG_DEPTH)}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
