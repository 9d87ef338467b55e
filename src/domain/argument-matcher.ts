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
