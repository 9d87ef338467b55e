import { z } from "zod";
import type { JsonPath } from "./secrets.js";

/**
 * Limits on the shape of JSON the lab accepts. Every walker over configs and audit details
 * (secret scans, redaction, zod, JSON.stringify) recurses, so a document nested a hundred
 * thousand levels deep overflowed the stack and became a 500. These checks walk with an explicit
 * stack, so they cannot overflow themselves, and run before anything that recurses.
 */

/** Deepest nesting a config or audit detail may have; real configs are 3-5 levels deep. */
export const MAX_CONFIG_DEPTH = 64;

/** Deepest nesting of a whole request body or import document (a config sits a few levels in). */
export const MAX_DOCUMENT_DEPTH = 128;

/**
 * The path to the first value nested deeper than `maxDepth` levels of objects and arrays, or null.
 * `{}` is depth 1, `{ a: {} }` depth 2.
 */
export function findTooDeep(value: unknown, maxDepth: number): JsonPath | null {
  // Each entry links to its parent, so a path is built only for the one that is too deep.
  interface Entry {
    value: unknown;
    key: string | number;
    parent: Entry | null;
    depth: number;
  }
  const stack: Entry[] = [{ value, key: "", parent: null, depth: 0 }];
  while (stack.length > 0) {
    const entry = stack.pop() as Entry;
    if (entry.value === null || typeof entry.value !== "object") continue;
    if (entry.depth >= maxDepth) {
      const path: JsonPath = [];
      for (let at: Entry | null = entry; at?.parent; at = at.parent) path.unshift(at.key);
      return path;
    }
    if (Array.isArray(entry.value)) {
      entry.value.forEach((child, index) => {
        stack.push({ value: child, key: index, parent: entry, depth: entry.depth + 1 });
      });
    } else {
      for (const [key, child] of Object.entries(entry.value)) {
        stack.push({ value: child, key, parent: entry, depth: entry.depth + 1 });
      }
    }
  }
  return null;
}

export function describeTooDeep(path: JsonPath, maxDepth: number): string {
  const shown = path.slice(0, 6).map(String).join(".");
  return `nested deeper than ${maxDepth} levels (at ${shown}${path.length > 6 ? ".…" : ""})`;
}

/**
 * A lone UTF-16 surrogate (`"\ud800"` in JSON) is not a character: it has no UTF-8 encoding, and
 * SQLite would store invalid bytes. Node 20 has `String.prototype.isWellFormed`, but the lib
 * target here is ES2023, hence the regex.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

export const LONE_SURROGATE_MESSAGE =
  "contains a lone UTF-16 surrogate, which is not valid Unicode; send the whole character (a surrogate pair) or remove it";

/** Paths of every string (or object key) holding a lone surrogate. Bounded depth assumed. */
export function findMalformedText(value: unknown, path: JsonPath = []): JsonPath[] {
  if (typeof value === "string") return isWellFormedText(value) ? [] : [path];
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => findMalformedText(item, [...path, index]));
  }
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, child]) => [
    ...(isWellFormedText(key) ? [] : [[...path, key]]),
    ...findMalformedText(child, [...path, key]),
  ]);
}

/**
 * The first `end` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a
 * title or a cut cut there would hold a lone surrogate, which the store refuses (or repairs).
 */
export function sliceWhole(text: string, end: number): string {
  if (end >= text.length) return text;
  const last = text.charCodeAt(end - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/** Text with each lone surrogate replaced by U+FFFD, as a UTF-8 decoder would show it. */
export function toWellFormedText(text: string): string {
  return isWellFormedText(text) ? text : text.replace(LONE_SURROGATES, "\uFFFD");
}

/**
 * Whether `value` is made of plain objects and arrays of JSON's own values only, every text
 * accepted by `text` and every key by `key`: what JSON writes of it is then the value as it is,
 * and a copy that repairs texts (`toWellFormed`, the store's redaction) can be skipped. Bounded
 * depth assumed.
 */
export function isPlainJsonWith(
  value: unknown,
  text: (text: string) => boolean,
  key: (key: string) => boolean,
): boolean {
  switch (typeof value) {
    case "string":
      return text(value);
    case "number":
    case "boolean":
      return true;
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (const item of value) if (!isPlainJsonWith(item, text, key)) return false;
        return true;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      for (const name in value) {
        if (!Object.hasOwn(value, name) || !key(name)) return false;
        if (!isPlainJsonWith((value as Record<string, unknown>)[name], text, key)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Whether JSON of `value` is the JSON of `toWellFormed(value)` (see isPlainJsonWith). */
export function isWellFormedJson(value: unknown): boolean {
  return isPlainJsonWith(value, isWellFormedText, isWellFormedText);
}

/**
 * `value` with every string (and key) made well-formed: a deep copy, or the value itself when
 * nothing needs repair (a stored row's tool calls nearly always), which callers only serialize
 * or copy again. Bounded depth assumed.
 */
export function toWellFormed<T>(value: T): T {
  return isWellFormedJson(value) ? value : wellFormedCopy(value);
}

function wellFormedCopy<T>(value: T): T {
  if (typeof value === "string") return toWellFormedText(value) as T;
  if (Array.isArray(value)) return value.map((item) => wellFormedCopy(item)) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [toWellFormedText(key), wellFormedCopy(child)]),
  ) as T;
}

/** A string a person wrote (a title, a user message): refused, not repaired, when malformed. */
export const WellFormedString = z.string().refine(isWellFormedText, LONE_SURROGATE_MESSAGE);

/** A JSON object of any shape (audit details, tool arguments), bounded in depth. */
export function boundedRecord(maxDepth: number = MAX_CONFIG_DEPTH) {
  return z.record(z.string(), z.unknown()).superRefine((value, context) => {
    const tooDeep = findTooDeep(value, maxDepth);
    if (tooDeep !== null) {
      context.addIssue({
        code: "custom",
        path: tooDeep.slice(0, 2),
        message: describeTooDeep(tooDeep, maxDepth),
      });
    }
  });
}
