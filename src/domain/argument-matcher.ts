import { z } from "zod";

/**
 * How one argument of a tool call is matched, by suites (expected calls) and by declared tools'
 * mock cases alike: a bare value means `equals`.
 * - `equals`: deep equality (strings compared as the call expectation's `string_match` says);
 * - `contains`: a case-insensitive substring; `regex` (with optional JavaScript `flags`);
 * - `any`: present, any value; `absent`: not given at all;
 * - `one_of`: any of these matchers (a bare value in the list means `equals`);
 * - `optional`: absent, or present and matching.
 */
export type ArgumentMatcher =
  | { equals: unknown }
  | { contains: string }
  | { regex: string; flags?: string | undefined }
  | { any: true }
  | { absent: true }
  | { one_of: ArgumentMatcher[] }
  | { optional: ArgumentMatcher };

export const ArgumentMatcher: z.ZodType<ArgumentMatcher, unknown> = z.lazy(() =>
  z.union([
    z.strictObject({ equals: z.unknown() }),
    z.strictObject({ contains: z.string() }),
    z.strictObject({
      regex: z.string(),
      flags: z
        .string()
        .regex(/^[dgimsuvy]*$/)
        .optional(),
    }),
    z.strictObject({ any: z.literal(true) }),
    z.strictObject({ absent: z.literal(true) }),
    z.strictObject({ one_of: z.array(ArgumentMatcher).min(1) }),
    z.strictObject({ optional: ArgumentMatcher }),
    z.unknown().transform((value) => ({ equals: value })),
  ]),
);

/** The keys that make an object a matcher rather than a literal value. */
export const MATCHER_KEYS = [
  "equals",
  "contains",
  "regex",
  "flags",
  "any",
  "absent",
  "one_of",
  "optional",
];
