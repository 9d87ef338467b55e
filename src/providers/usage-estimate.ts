import type { ChatMessage } from "../domain/messages.js";
import { type TokenUsage, tokenUsage } from "../domain/usage.js";
import { countPromptTokens, countTokens } from "./tokenizer.js";

/** What a call streamed, as far as it came. */
export interface StreamedOutput {
  text: string;
  reasoning: string;
  refusal: string;
  /** Each tool call's raw arguments. */
  tool_arguments: Iterable<string>;
}

/**
 * Token counts the lab counts itself, for a call whose endpoint reported none (the adapter) or
 * that was cut before it could (the runtime): the prompt with `toolsJson`, and what streamed.
 * Streamed reasoning was generated, so it is inside the completion (and its reasoning count).
 * Estimates either way (the endpoint's model may tokenize differently); the row says so.
 */
export function estimateUsage(
  messages: readonly ChatMessage[],
  toolsJson: string,
  output: StreamedOutput,
): TokenUsage {
  const prompt_tokens = countPromptTokens(messages, toolsJson);
  const reasoning_tokens = countTokens(output.reasoning);
  let completion_tokens = countTokens(output.text) + countTokens(output.refusal) + reasoning_tokens;
  for (const raw of output.tool_arguments) completion_tokens += countTokens(raw);
  return tokenUsage({ prompt_tokens, completion_tokens, reasoning_tokens });
}
