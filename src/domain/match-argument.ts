import { isDeepStrictEqual } from "node:util";
import type { ArgumentMatcher } from "./argument-matcher.js";

// Apart from the schema: the web UI reads the domain's types, and this needs node:util.

/**
 * `equals` is deep equality (key order ignored, types strict); `contains` a case-insensitive
 * substring of a string; `regex` a JavaScript regex tested on a string (an invalid one matches
 * nothing); `any` matches any present value. `actual` is undefined when the argument is absent.
 */
export function matchArgument(matcher: ArgumentMatcher, actual: unknown): boolean {
  if ("any" in matcher) return actual !== undefined;
  if ("contains" in matcher) {
    return (
      typeof actual === "string" && actual.toLowerCase().includes(matcher.contains.toLowerCase())
    );
  }
  if ("regex" in matcher) {
    if (typeof actual !== "string") return false;
    try {
      return new RegExp(matcher.regex).test(actual);
    } catch {
      return false;
    }
  }
  return isDeepStrictEqual(actual, matcher.equals);
}

/** True when every matcher fits the argument of its name (absent arguments are undefined). */
export function matchArguments(
  matchers: Readonly<Record<string, ArgumentMatcher>>,
  args: Readonly<Record<string, unknown>>,
): boolean {
  return Object.entries(matchers).every(([name, matcher]) =>
    matchArgument(matcher, Object.hasOwn(args, name) ? args[name] : undefined),
  );
}
