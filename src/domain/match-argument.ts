import { isDeepStrictEqual } from "node:util";
import type { ArgumentMatcher } from "./argument-matcher.js";
import type { StringMatch } from "./experiment.js";

// Apart from the schema: the web UI reads the domain's types, and this needs node:util.

/**
 * `equals` is deep equality (key order ignored, types strict; strings compared as `strings` says,
 * at any depth); `contains` a case-insensitive substring of a string; `regex` a JavaScript regex
 * tested on a string (an invalid one matches nothing); `any` matches any present value, `absent`
 * only a missing one; `one_of` any of its matchers; `optional` a missing value or a match.
 * `actual` is undefined when the argument is absent.
 */
export function matchArgument(
  matcher: ArgumentMatcher,
  actual: unknown,
  strings: StringMatch = "exact",
): boolean {
  if ("any" in matcher) return actual !== undefined;
  if ("absent" in matcher) return actual === undefined;
  if ("optional" in matcher)
    return actual === undefined || matchArgument(matcher.optional, actual, strings);
  if ("one_of" in matcher)
    return matcher.one_of.some((option) => matchArgument(option, actual, strings));
  if ("contains" in matcher) {
    return (
      typeof actual === "string" && actual.toLowerCase().includes(matcher.contains.toLowerCase())
    );
  }
  if ("regex" in matcher) {
    if (typeof actual !== "string") return false;
    try {
      return new RegExp(matcher.regex, matcher.flags).test(actual);
    } catch {
      return false;
    }
  }
  if (actual === undefined) return false;
  if (strings === "bfcl")
    return isDeepStrictEqual(bfclNormalized(actual), bfclNormalized(matcher.equals));
  return isDeepStrictEqual(actual, matcher.equals);
}

/** True when every matcher fits the argument of its name (absent arguments are undefined). */
export function matchArguments(
  matchers: Readonly<Record<string, ArgumentMatcher>>,
  args: Readonly<Record<string, unknown>>,
  strings: StringMatch = "exact",
): boolean {
  return Object.entries(matchers).every(([name, matcher]) =>
    matchArgument(matcher, Object.hasOwn(args, name) ? args[name] : undefined, strings),
  );
}

/** BFCL's `standardize_string`: drop ` ,./-_*^`, lowercase, `'` as `"`. */
export function bfclString(text: string): string {
  return text
    .replace(/[ ,./\-_*^]/g, "")
    .toLowerCase()
    .replaceAll("'", '"');
}

/** Every string in a value (lists and objects included) as BFCL compares it. */
function bfclNormalized(value: unknown): unknown {
  if (typeof value === "string") return bfclString(value);
  if (Array.isArray(value)) return value.map(bfclNormalized);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => [key, bfclNormalized(child)]),
    );
  }
  return value;
}
