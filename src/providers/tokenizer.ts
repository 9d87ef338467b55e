import { encode } from "gpt-tokenizer/encoding/o200k_base";
import type { ChatMessage } from "../domain/messages.js";

/**
 * A real BPE tokenizer (o200k_base, GPT-4o's), used where an endpoint reports no usage and by the
 * simulated model. Counts for other model families are estimates, and are labelled so.
 */
export function tokenize(text: string): number[] {
  return encode(text);
}

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : encode(text).length;
}

/**
 * The token sequence a chat prompt becomes, using OpenAI's documented framing (a few tokens per
 * message for role and separators, three to prime the reply). Returned as tokens, not a count, so a
 * prefix cache can compare two prompts.
 */
export function promptTokens(messages: readonly ChatMessage[], toolsJson = ""): number[] {
  const tokens: number[] = [];
  for (const message of messages) {
    tokens.push(...encode(`<|${message.role}${message.name ? ` ${message.name}` : ""}|>`));
    if (message.content) tokens.push(...encode(message.content));
    for (const call of message.tool_calls) {
      tokens.push(...encode(`${call.name}(${call.raw_arguments})`));
    }
    if (message.tool_call_id) tokens.push(...encode(message.tool_call_id));
  }
  if (toolsJson) tokens.push(...encode(toolsJson));
  tokens.push(...encode("<|assistant|>"));
  return tokens;
}
