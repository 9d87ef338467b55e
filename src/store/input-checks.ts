import type { z } from "zod";
import { MAX_CONFIG_DEPTH } from "../domain/json-limits.js";
import { TokenUsage } from "../domain/usage.js";

/**
 * The value checks the store's plain-shape paths share (fast-inputs.ts for any caller's input,
 * runtime-records.ts for the runtime's own batches): each as strict as the zod schema it stands
 * in for, or stricter.
 */

/** A call's token counts, in the schema's order. */
export const TOKEN_KEYS = TokenUsage.keyof().options;

/**
 * An object zod reads as a record: plain, own string keys only, no own __proto__, and no own
 * `constructor` (zod's plain-object test reads a function there as a class, and refuses it).
 */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  let enumerable = 0;
  for (const _key in value) enumerable++;
  return (
    hasOnlyKeysSeen(value, enumerable) &&
    !Object.hasOwn(value, "__proto__") &&
    !Object.hasOwn(value, "constructor")
  );
}

/**
 * Whether an object has no symbol key and as many own string keys as its for-in walk counted
 * (`seen`). A non-enumerable own key then hides only behind an enumerable one inherited from a
 * polluted prototype, which zod reads as this check's callers do (through `in` and a property
 * read; a record copies neither). Counted with `getOwnPropertyNames`, which V8 answers from a
 * plain object's key cache, rather than `Reflect.ownKeys`, which it does not: the batch's checks
 * took 33 µs against 16 for a turn's two batches in a hot loop.
 */
export function hasOnlyKeysSeen(value: object, seen: number): boolean {
  return (
    seen === Object.getOwnPropertyNames(value).length &&
    Object.getOwnPropertySymbols(value).length === 0
  );
}

/** Whether no object or array sits deeper than `findTooDeep` allows (`{}` is depth 1). */
export function fitsDepth(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== "object") return true;
  if (depth >= MAX_CONFIG_DEPTH) return false;
  // Walked in place (no array of the values per level): every audit row's details pass here.
  if (Array.isArray(value)) {
    for (const child of value) if (!fitsDepth(child, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (
      Object.hasOwn(value, key) &&
      !fitsDepth((value as Record<string, unknown>)[key], depth + 1)
    ) {
      return false;
    }
  }
  return true;
}

export const isIndex = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0;
export const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
export const isFiniteNonNegative = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0;
export const isMilliseconds = isFiniteNonNegative;
/** A nullable field with a null default: absent or null reads null; else it must pass `check`. */
export const nullable = (value: unknown, check: (value: unknown) => boolean): boolean =>
  value === undefined || value === null || check(value);
export const text =
  (min: number, max = Number.POSITIVE_INFINITY) =>
  (value: unknown): value is string =>
    typeof value === "string" && value.length >= min && value.length <= max;
export const isId = text(1);
export const isBoolean = (value: unknown) => value === undefined || typeof value === "boolean";
/**
 * `isPlainRecord(value)` with every key one of `keys` (a strict object's), in one walk of its
 * keys instead of two: every entry of a round's batch is checked here.
 */
export function isStrictRecord(
  value: unknown,
  keys: ReadonlySet<string>,
): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  let enumerable = 0;
  for (const key in value) {
    if (!keys.has(key)) return false;
    enumerable++;
  }
  // As isPlainRecord (an own __proto__ or constructor is in no key set).
  return hasOnlyKeysSeen(value, enumerable);
}
export function definedOnly(value: Record<string, unknown>, keys: readonly string[]): boolean {
  return keys.every((key) => !(key in value) || value[key] !== undefined);
}
/** Whether a refinement (zod's superRefine callback) raises nothing. */
export function passes(refine: (context: z.RefinementCtx) => void): boolean {
  let clean = true;
  refine({
    addIssue: () => {
      clean = false;
    },
  } as unknown as z.RefinementCtx);
  return clean;
}
