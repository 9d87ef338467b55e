import type { ChatMessage } from "../../domain/messages.js";
import { type TokenUsage, tokenUsage } from "../../domain/usage.js";
import { countPromptTokens, countTokens } from "../tokenizer.js";
import type { ToolCallPart } from "./completion-stream-decoder.js";
import type { WireTool } from "./request-body.js";

/**
 * Token counts for an endpoint that reported none, from the lab's own tokenizer. They are
 * estimates (the endpoint's model may tokenize differently), and the usage part says so.
 */
export function estimateUsage(
  messages: readonly ChatMessage[],
  tools: readonly WireTool[],
  text: string,
  toolCalls: readonly ToolCallPart[],
): TokenUsage {
  const prompt_tokens = countPromptTokens(messages, tools.length > 0 ? JSON.stringify(tools) : "");
  let completion_tokens = countTokens(text);
  for (const call of toolCalls) completion_tokens += countTokens(call.raw_arguments);
  return tokenUsage({ prompt_tokens, completion_tokens });
}
