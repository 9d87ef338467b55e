import type { ReplyPlan } from "./reply-plan.js";

const EVENT_NAME = /<event name="([^"]+)">/g;

/**
 * A short thinking text for the reply the sim has planned (option `reasoning`), streamed before
 * it as `reasoning-delta`s, so the lab's handling of reasoning can be shown and tested without a
 * hosted reasoning model. Deterministic: it only names what the plan will do.
 */
export function reasoningFor(plan: ReplyPlan): string {
  const tools = [
    ...plan.tool_calls.map((call) => call.name),
    ...Array.from(plan.text.matchAll(EVENT_NAME), (match) => match[1] ?? ""),
  ];
  if (tools.length > 0) {
    return `The request needs ${tools.join(" and ")}. I will call ${tools.length === 1 ? "it" : "them"} first, then answer from the results.`;
  }
  return "I have what I need to answer directly, without a tool.";
}
