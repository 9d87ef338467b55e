import type { SeededRandom } from "./seeded-random.js";
import type { JsonObject } from "./tool-arguments.js";

/**
 * The two mistakes real models make with tool arguments, reproduced on purpose so that the
 * argument fallback path runs: JSON cut off mid-way (not parseable), and valid JSON that names a
 * required field differently (parses, fails the schema).
 */
export type Malformation = "truncated_json" | "missing_required";

/** Common misnamings of required fields; anything else gets an `_value` suffix. */
const MISNAMED: Readonly<Record<string, string>> = { query: "q", title: "subject" };

/** Draws whether a call is malformed (probability `rate`) and, if so, how (even odds). */
export function drawMalformation(random: SeededRandom, rate: number): Malformation | null {
  const malformed = random.next() < rate;
  const kind: Malformation = random.next() < 0.5 ? "truncated_json" : "missing_required";
  return malformed ? kind : null;
}

/** The raw argument text with the given mistake. */
export function malformArguments(
  args: JsonObject,
  required: readonly string[],
  kind: Malformation,
  random: SeededRandom,
): string {
  const json = JSON.stringify(args);
  const field = required.find((name) => name in args);
  if (kind === "missing_required" && field !== undefined) {
    const renamed = Object.fromEntries(
      Object.entries(args).map(([name, value]) => [
        name === field ? (MISNAMED[name] ?? `${name}_value`) : name,
        value,
      ]),
    );
    return JSON.stringify(renamed);
  }
  // A proper prefix of a JSON object is never valid JSON; keep at least the opening brace.
  return json.slice(0, random.integer(1, Math.max(1, json.length - 1)));
}
