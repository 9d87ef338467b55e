import type { ToolOutcome } from "./conversation.js";

/**
 * Turns one tool result into a sentence of the answer. Tool outputs are untrusted text: JSON is
 * parsed defensively and only inspected for well-known fields (`error`, lists of results, `id`,
 * `title`, …); anything else is quoted, shortened.
 */

export interface ResultSummary {
  failed: boolean;
  sentence: string;
}

const LIST_KEYS = ["results", "items", "hits", "documents", "data", "tickets"];
const MAX_LISTED = 5;

export function summarizeResult(outcome: ToolOutcome): ResultSummary {
  const value = parseJson(outcome.content);
  const name = outcome.name;
  const failure = failureOf(value, outcome.content);
  if (failure !== null) return { failed: true, sentence: `${name} failed: ${failure}` };
  const list = listOf(value);
  if (list !== null) {
    if (list.length === 0) return { failed: false, sentence: `${name} found no results` };
    const shown = list.slice(0, MAX_LISTED).map(describeItem);
    const more = list.length > MAX_LISTED ? `, and ${list.length - MAX_LISTED} more` : "";
    const noun = list.length === 1 ? "result" : "results";
    return {
      failed: false,
      sentence: `${name} found ${list.length} ${noun}: ${shown.join("; ")}${more}`,
    };
  }
  if (isRecord(value) && (labelOf(value) !== null || idOf(value) !== null)) {
    return { failed: false, sentence: `${name} returned ${describeItem(value)}` };
  }
  return { failed: false, sentence: `${name} returned ${shorten(outcome.content.trim(), 160)}` };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function failureOf(value: unknown, text: string): string | null {
  if (isRecord(value)) {
    const error = value.error;
    if (typeof error === "string" && error) return error;
    if (isRecord(error)) return typeof error.message === "string" ? error.message : "an error";
    if (error === true || value.ok === false || value.success === false) {
      return typeof value.message === "string" ? value.message : "an error";
    }
    return null;
  }
  if (value === undefined && /^\s*(?:error|failed|failure)\b/i.test(text)) {
    return shorten(text.trim(), 160);
  }
  return null;
}

function listOf(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return null;
  for (const key of LIST_KEYS) {
    const list = value[key];
    if (Array.isArray(list)) return list;
  }
  return null;
}

function labelOf(item: Record<string, unknown>): string | null {
  for (const key of ["title", "name", "summary", "text", "snippet"]) {
    const label = item[key];
    if (typeof label === "string" && label) return label;
  }
  return null;
}

function idOf(item: Record<string, unknown>): string | null {
  for (const key of ["id", "ticket_id", "key", "url"]) {
    const id = item[key];
    if (typeof id === "string" || typeof id === "number") return String(id);
  }
  return null;
}

function describeItem(item: unknown): string {
  if (!isRecord(item)) return shorten(JSON.stringify(item) ?? String(item), 80);
  const label = labelOf(item);
  const id = idOf(item);
  const details = [id === null ? null : `id ${id}`];
  for (const key of ["status", "priority"]) {
    const detail = item[key];
    if (typeof detail === "string" && detail) details.push(`${key} ${detail}`);
  }
  const suffix = details.filter((detail) => detail !== null).join(", ");
  const head = label === null ? "" : `"${shorten(label, 80)}"`;
  if (!head) return suffix || shorten(JSON.stringify(item), 80);
  return suffix ? `${head} (${suffix})` : head;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
