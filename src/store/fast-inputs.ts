import type { z } from "zod";
import { MAX_CONFIG_DEPTH } from "../domain/json-limits.js";
import { parseInput } from "../domain/validation.js";
import { AppendAuditOptions, AppendRecordsOptions } from "./store-inputs.js";

type ValidAudit = z.output<typeof AppendAuditOptions>;
type ValidRecords = z.output<typeof AppendRecordsOptions>;

/**
 * The store validates every row it is given with zod (store-inputs.ts), and a round's batch is a
 * dozen rows, most of them audit entries: zod's generic record walk was the largest part of what
 * validating a round cost. Here an audit entry of the plain shape every writer sends is checked
 * directly; anything else (and anything refused) goes through zod, so the accepted output and
 * every refusal message stay zod's. The checks are as strict as the schema or stricter, never
 * looser: a value they doubt is zod's to judge (fast-inputs.test.ts compares both on mutations).
 */

const AUDIT_KEYS = new Set(["event", "details", "turn_index", "round_index"]);
const RECORD_KEYS = new Set([
  "message_groups",
  "usage",
  "audit",
  "payloads",
  "rollup_turn",
  "complete_turn",
]);
const AppendRecordsRest = AppendRecordsOptions.omit({ audit: true });

/** An object zod reads as a record: plain, own string keys only, all enumerable, no __proto__. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  const names = Object.getOwnPropertyNames(value);
  return (
    Object.getOwnPropertySymbols(value).length === 0 &&
    names.length === Object.keys(value).length &&
    !names.includes("__proto__")
  );
}

/** Whether no object or array sits deeper than `findTooDeep` allows (`{}` is depth 1). */
function fitsDepth(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== "object") return true;
  if (depth >= MAX_CONFIG_DEPTH) return false;
  const children = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) if (!fitsDepth(child, depth + 1)) return false;
  return true;
}

const isIndex = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0;

/** `AppendAuditOptions.parse(input)` for the plain shape, or null: ask zod. */
function fastAudit(input: unknown): ValidAudit | null {
  if (!isPlainRecord(input)) return null;
  for (const key in input) if (!AUDIT_KEYS.has(key)) return null;
  const { event, details, turn_index, round_index } = input;
  if (typeof event !== "string" || event.length === 0) return null;
  if (details !== undefined && !(isPlainRecord(details) && fitsDepth(details, 0))) return null;
  if (!(turn_index === undefined || turn_index === null || isIndex(turn_index))) return null;
  if (!(round_index === undefined || round_index === null || isIndex(round_index))) return null;
  return {
    event,
    // zod's record output: a copy with the same keys in the same order.
    details: details === undefined ? {} : { ...details },
    turn_index: turn_index ?? null,
    round_index: round_index ?? null,
  };
}

/** `parseInput(AppendAuditOptions, input, where)`, the plain shape checked without zod. */
export function parseAppendAudit(input: unknown, where: string): ValidAudit {
  return fastAudit(input) ?? parseInput(AppendAuditOptions, input, where);
}

/** `parseInput(AppendRecordsOptions, input, "appendRecords")`, plain audit entries without zod. */
export function parseAppendRecords(input: unknown): ValidRecords {
  return fastRecords(input) ?? parseInput(AppendRecordsOptions, input, "appendRecords");
}

function fastRecords(input: unknown): ValidRecords | null {
  if (!isPlainRecord(input)) return null;
  for (const key in input) if (!RECORD_KEYS.has(key)) return null;
  const { audit: entries, ...rest } = input;
  if (entries !== undefined && !Array.isArray(entries)) return null;
  const audit: ValidAudit[] = [];
  for (const entry of entries ?? []) {
    const valid = fastAudit(entry);
    if (valid === null) return null;
    audit.push(valid);
  }
  const others = AppendRecordsRest.safeParse(rest);
  return others.success ? { ...others.data, audit } : null;
}
