import type { ChatMessage } from "../../domain/messages.js";
import { type TokenUsage, tokenUsage } from "../../domain/usage.js";
import { countPromptTokens, countTokens } from "../tokenizer.js";
import type { ToolCallPart } from "./completion-stream-decoder.js";
import type { WireTool } from "./request-body.js";

/** What streamed, as the estimate needs it. */
export interface StreamedOutput {
  text: string;
  reasoning: string;
  refusal: string;
  tool_calls: readonly ToolCallPart[];
}

/**
 * Token counts for an endpoint that reported none, from the lab's own tokenizer. They are
 * estimates (the endpoint's model may tokenize differently), and the usage part says so. Streamed
 * reasoning was generated, so it is counted in the completion (and as its reasoning).
 */
export function estimateUsage(
  messages: readonly ChatMessage[],
  tools: readonly WireTool[],
  output: StreamedOutput,
): TokenUsage {
  const prompt_tokens = countPromptTokens(messages, tools.length > 0 ? JSON.stringify(tools) : "");
  const reasoning_tokens = countTokens(output.reasoning);
  let completion_tokens = countTokens(output.text) + countTokens(output.refusal) + reasoning_tokens;
  for (const call of output.tool_calls) completion_tokens += countTokens(call.raw_arguments);
  return tokenUsage({ prompt_tokens, completion_tokens, reasoning_tokens });
}
