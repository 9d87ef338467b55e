import { z } from "zod";
import { ToolCallEvent } from "../domain/events.js";
import { parseJsonText } from "../domain/validation.js";
import { fastList, fastToolCall } from "./fast-inputs.js";

const ToolCalls = z.array(ToolCallEvent);

/**
 * A stored message's tool calls (its `tool_calls_json`), as `parseJsonText(z.array(ToolCallEvent),
 * text, where)` reads them. A history load and an experiment report read one per assistant
 * message, and zod's walk was a good part of a report's cost: the plain shape every writer stores
 * is checked directly (fast-inputs.ts, the same checks appendRecords trusts), anything else, and
 * every refusal, is zod's.
 */
export function parseStoredToolCalls(text: string, where: string): ToolCallEvent[] {
  if (text === "[]") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return parseJsonText(ToolCalls, text, where);
  }
  const fast = Array.isArray(value) ? fastList(value, fastToolCall) : null;
  return fast ?? parseJsonText(ToolCalls, text, where);
}
