import { LabSessionConfig } from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";

/** How many distinct configs are kept parsed at most (least recently used go first). */
const MAX_CONFIGS = 64;

const parsed = new Map<string, LabSessionConfig>();

/**
 * The JSON text of a value made only of what JSON keeps as it is (plain objects, arrays, strings,
 * finite numbers but -0, booleans, null), else null. Two such values with one text parse alike, so the
 * text is a safe key; anything JSON would change or drop (undefined, NaN, a Date, a class
 * instance, a toJSON, a hole) makes the value uncacheable, and it is parsed as it is.
 */
function plainJson(value: unknown): string | null {
  let plain = true;
  const text = JSON.stringify(value, function check(this: unknown, key: string, converted) {
    const original = (this as Record<string, unknown>)[key];
    switch (typeof original) {
      case "string":
      case "boolean":
        break;
      case "number":
        // JSON writes NaN as null and -0 as 0.
        if (!Number.isFinite(original) || Object.is(original, -0)) plain = false;
        break;
      case "object": {
        if (original === null) break;
        // JSON would write what toJSON returns, the parser reads the object itself.
        if (typeof (original as { toJSON?: unknown }).toJSON === "function") plain = false;
        const prototype = Object.getPrototypeOf(original);
        if (!Array.isArray(original) && prototype !== Object.prototype && prototype !== null) {
          plain = false;
        }
        break;
      }
      default:
        plain = false;
    }
    return converted;
  });
  return plain && text !== undefined ? text : null;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * `parseInput(LabSessionConfig, value, where)`, remembered by the value's JSON text: a session's
 * every turn reads the same stored config (and a client often sends the same one again), and a
 * full config parse is a good part of what a turn costs the lab. Parsing is a pure function of
 * the text, refusals are never kept (they throw as before), and the parsed config is frozen, since
 * every turn that asks shares it.
 */
export function parseSessionConfig(value: unknown, where: string): LabSessionConfig {
  const key = plainJson(value);
  if (key === null) return parseInput(LabSessionConfig, value, where);
  const known = parsed.get(key);
  if (known !== undefined) {
    parsed.delete(key);
    parsed.set(key, known);
    return known;
  }
  const config = deepFreeze(parseInput(LabSessionConfig, value, where));
  parsed.set(key, config);
  for (const oldest of parsed.keys()) {
    if (parsed.size <= MAX_CONFIGS) break;
    parsed.delete(oldest);
  }
  return config;
}
