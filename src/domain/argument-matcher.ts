import { isDeepStrictEqual } from "node:util";
import { z } from "zod";

/**
 * How one argument of a tool call is matched, by suites (expected calls) and by declared tools'
 * mock cases alike: a bare value means `equals`.
 */
export const ArgumentMatcher = z.union([
  z.strictObject({ equals: z.unknown() }),
  z.strictObject({ contains: z.string() }),
  z.strictObject({ regex: z.string() }),
  z.strictObject({ any: z.literal(true) }),
  z.unknown().transform((value) => ({ equals: value })),
]);
export type ArgumentMatcher = z.output<typeof ArgumentMatcher>;

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
