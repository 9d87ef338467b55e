import { LabSessionConfig, modeOf, type ToolInvocationMode } from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";
import { deepFreeze } from "./deep-freeze.js";

/** How many distinct configs are kept parsed at most (least recently used go first). */
const MAX_CONFIGS = 64;

const parsed = new Map<string, LabSessionConfig>();

/** Deeper than any real config (json-limits.ts refuses past 64 levels): zod judges those. */
const MAX_PLAIN_DEPTH = 32;

/**
 * Whether a value is made only of what JSON keeps as it is (plain objects, arrays without holes,
 * strings, finite numbers but -0, booleans, null), at most MAX_PLAIN_DEPTH levels deep. Walked
 * with a bound, so a document nested a hundred thousand levels deep is zod's to refuse.
 */
function isPlain(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      // JSON writes NaN as null and -0 as 0.
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object": {
      if (value === null) return true;
      if (depth >= MAX_PLAIN_DEPTH) return false;
      // JSON would write what toJSON returns, the parser reads the object itself.
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          if (!(index in value) || !isPlain(value[index], depth + 1)) return false;
        }
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      for (const child of Object.values(value)) if (!isPlain(child, depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * The JSON text of a plain value (see isPlain), else null. Two plain values with one text parse
 * alike, so the text is a safe key; anything JSON would change or drop makes the value
 * uncacheable, and it is parsed as it is.
 */
function plainJson(value: unknown): string | null {
  return isPlain(value, 0) ? JSON.stringify(value) : null;
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
  const known = recall(parsed, key);
  if (known !== undefined) return known;
  const config = deepFreeze(parseInput(LabSessionConfig, value, where));
  keep(parsed, key, config);
  return config;
}

/** A stored config as a turn reads it: parsed, and the mode its raw form says (`modeOf`). */
export interface StoredConfig {
  config: LabSessionConfig;
  mode: ToolInvocationMode;
}

const storedByText = new Map<string, StoredConfig>();

/**
 * A session's stored config (its JSON text, `getStoredSessionConfig`), parsed once per text: the
 * same session's every turn reads the same text, and neither the JSON nor the config is parsed
 * again. Null for a text that is not a JSON object (the store's own read names the problem).
 */
export function parseStoredSessionConfig(text: string, where: string): StoredConfig | null {
  const known = recall(storedByText, text);
  if (known !== undefined) return known;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
  const stored = {
    config: parseSessionConfig(raw, where),
    mode: modeOf(raw as Record<string, unknown>),
  };
  // Shared only when frozen: a config parseSessionConfig would not cache (a -0, a deep nesting)
  // is each caller's own.
  if (Object.isFrozen(stored.config)) keep(storedByText, text, stored);
  return stored;
}

/** A kept value, moved to the newest end (the caches drop their least recently used first). */
function recall<Value>(cache: Map<string, Value>, key: string): Value | undefined {
  const known = cache.get(key);
  if (known !== undefined) {
    cache.delete(key);
    cache.set(key, known);
  }
  return known;
}

/** Keeps a value, dropping the least recently used past MAX_CONFIGS. */
function keep<Value>(cache: Map<string, Value>, key: string, value: Value): void {
  cache.set(key, value);
  for (const oldest of cache.keys()) {
    if (cache.size <= MAX_CONFIGS) break;
    cache.delete(oldest);
  }
}
