import type { ToolOutcome } from "./conversation.js";
import type { Intent, IntentKind } from "./intents.js";
import { summarizeResult } from "./result-summary.js";
import { kindOfTool, toolOf } from "./tool-arguments.js";

/** The simulated model's prose: answers from tool results, small talk, and what it cannot do. */

export function answerFromResults(outcomes: readonly ToolOutcome[]): string {
  const summaries = outcomes.map(summarizeResult);
  const lines = summaries.map((summary) => `- ${summary.sentence}.`);
  const failed = summaries.filter((summary) => summary.failed).length;
  const opening =
    failed === 0
      ? "Here is what the tools returned:"
      : failed === summaries.length
        ? "The tool call failed, so I could not complete the request:"
        : "Some of the tool calls worked and some failed:";
  const closing =
    failed === 0 ? "" : "\nI did not retry automatically; tell me if you want me to try again.";
  return `${opening}\n${lines.join("\n")}${closing}`;
}

/** "Let me search for …" before an event tag or tool call. */
export function announce(intent: Intent): string {
  return intent.kind === "search"
    ? `Let me search for "${intent.query}".`
    : `I'll file a ticket about "${intent.title}".`;
}

export function unavailableNote(intents: readonly Intent[], toolsDisabled: boolean): string {
  const names = [...new Set(intents.map((intent) => toolOf(intent.kind)))];
  const what = intents.map((intent) =>
    intent.kind === "search"
      ? `search for "${intent.query}"`
      : `file a ticket about "${intent.title}"`,
  );
  const reason = toolsDisabled
    ? "tool use is turned off for this reply"
    : `no ${names.join(" or ")} tool is available here`;
  return `I would ${what.join(" and ")}, but ${reason}.`;
}

export function clarifyQuestion(unclear: readonly IntentKind[]): string {
  return unclear.includes("search")
    ? "What should I search for?"
    : "What should the ticket be about?";
}

const GREETING = /^\s*(?:hi|hello|hey|good\s+(?:morning|afternoon|evening))\b/i;
const ARITHMETIC = /(-?\d+(?:\.\d+)?)\s*([+\-*/×x÷])\s*(-?\d+(?:\.\d+)?)/;

/** An answer that needs no tool; `offered` names the tools the model could call. */
export function plainAnswer(userText: string, offered: readonly string[]): string {
  const arithmetic = ARITHMETIC.exec(userText);
  if (arithmetic) {
    const left = Number(arithmetic[1]);
    const right = Number(arithmetic[3]);
    const operator = arithmetic[2] as string;
    return `${left} ${operator} ${right} = ${formatNumber(calculate(left, operator, right))}.`;
  }
  const abilities =
    offered.length > 0
      ? `I can call ${offered.join(", ")}: ${howToAsk(offered)}.`
      : "No tools are available to me here.";
  if (GREETING.test(userText)) {
    return `Hello! I'm the lab's simulated model. ${abilities}`;
  }
  if (userText.trim() === "") return `I'm the lab's simulated model. ${abilities}`;
  const quoted = userText.trim().replace(/\s+/g, " ");
  const shown = quoted.length > 80 ? `${quoted.slice(0, 79)}…` : quoted;
  return `I'm the lab's simulated model, so I have no real answer to "${shown}". ${abilities}`;
}

/** The built-ins are asked for in words; any other tool by name (see named-call.ts). */
function howToAsk(offered: readonly string[]): string {
  const builtins = "ask me to search for something or to file a ticket";
  const other = offered.find((name) => kindOfTool(name) === null);
  if (other === undefined) return builtins;
  const byName = `say "call ${other} with {…arguments as JSON…}"`;
  return offered.length > 1 && offered.some((name) => kindOfTool(name) !== null)
    ? `${byName}, or ${builtins}`
    : byName;
}

function calculate(left: number, operator: string, right: number): number {
  switch (operator) {
    case "+":
      return left + right;
    case "-":
      return left - right;
    case "/":
    case "÷":
      return left / right;
    default:
      return left * right;
  }
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "undefined";
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
}
